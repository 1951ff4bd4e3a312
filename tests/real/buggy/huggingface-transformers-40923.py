# expect: collective-mismatch
# source: https://github.com/huggingface/transformers/pull/40923
# reason: When saving a checkpoint, only the main process writes the best-checkpoint directory, but every process then records `best_model_checkpoint` only if that directory already exists on disk; a non-main process that gets there before rank 0 finishes leaves it unset, so at the end of training rank 0 enters the load-best-model branch and its `dist.barrier()` while the other ranks skip it, and the job hangs; the merged fix makes every process wait for the main process before the existence check.
import math
import os
import shutil

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

PREFIX_CHECKPOINT_DIR = "checkpoint"


class TrainerState:
    def __init__(self):
        self.global_step = 0
        self.best_metric = None
        self.best_global_step = None
        self.best_model_checkpoint = None


class Trainer:
    def __init__(self, model, train_dataset, eval_dataset, output_dir, num_epochs=3, batch_size=32,
                 save_steps=100, load_best_model_at_end=True, greater_is_better=False):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.rank = dist.get_rank()
        self.device = torch.device("cuda", self.local_rank)
        self.model = model.to(self.device)
        self.wrapped = DDP(self.model, device_ids=[self.local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=3e-4)
        self.train_sampler = DistributedSampler(train_dataset, shuffle=True)
        self.train_loader = DataLoader(train_dataset, batch_size=batch_size, sampler=self.train_sampler)
        self.eval_loader = DataLoader(eval_dataset, batch_size=batch_size,
                                      sampler=DistributedSampler(eval_dataset, shuffle=False))
        self.output_dir, self.num_epochs, self.save_steps = output_dir, num_epochs, save_steps
        self.load_best_model_at_end = load_best_model_at_end
        self.greater_is_better = greater_is_better
        self.state = TrainerState()

    def is_world_process_zero(self):
        return self.rank == 0

    @torch.no_grad()
    def evaluate(self):
        self.wrapped.eval()
        total = torch.zeros(2, device=self.device)
        for x, y in self.eval_loader:
            x, y = x.to(self.device), y.to(self.device)
            total[0] += nn.functional.cross_entropy(self.wrapped(x), y, reduction="sum")
            total[1] += y.numel()
        dist.all_reduce(total)
        self.wrapped.train()
        return (total[0] / total[1]).item()

    def _save_checkpoint(self, metric):
        folder = f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
        output_dir = os.path.join(self.output_dir, folder)
        better = self.state.best_metric is None or (
            metric > self.state.best_metric if self.greater_is_better else metric < self.state.best_metric)
        if better:
            self.state.best_metric = metric
            self.state.best_global_step = self.state.global_step
        if self.is_world_process_zero():
            os.makedirs(output_dir, exist_ok=True)
            torch.save(self.model.state_dict(), os.path.join(output_dir, "pytorch_model.bin"))
            torch.save(self.optimizer.state_dict(), os.path.join(output_dir, "optimizer.pt"))
            self._rotate_checkpoints()
        if self.state.best_global_step:
            best_dir = os.path.join(self.output_dir, f"{PREFIX_CHECKPOINT_DIR}-{self.state.best_global_step}")
            if os.path.exists(best_dir):
                self.state.best_model_checkpoint = best_dir

    def _rotate_checkpoints(self, limit=2):
        folders = sorted((d for d in os.listdir(self.output_dir) if d.startswith(PREFIX_CHECKPOINT_DIR)),
                         key=lambda d: int(d.split("-")[-1]))
        best = f"{PREFIX_CHECKPOINT_DIR}-{self.state.best_global_step}"
        stale = [d for d in folders if d != best][: max(0, len(folders) - limit)]
        for d in stale:
            shutil.rmtree(os.path.join(self.output_dir, d), ignore_errors=True)

    def _load_best_model(self):
        state_dict = torch.load(os.path.join(self.state.best_model_checkpoint, "pytorch_model.bin"),
                                map_location=self.device)
        self.model.load_state_dict(state_dict)

    def train(self):
        steps_per_epoch = len(self.train_loader)
        max_steps = math.ceil(self.num_epochs * steps_per_epoch)
        for epoch in range(self.num_epochs):
            self.train_sampler.set_epoch(epoch)
            for x, y in self.train_loader:
                x, y = x.to(self.device), y.to(self.device)
                loss = nn.functional.cross_entropy(self.wrapped(x), y)
                loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
                self.state.global_step += 1
                if self.state.global_step % self.save_steps == 0 or self.state.global_step == max_steps:
                    self._save_checkpoint(self.evaluate())

        if self.load_best_model_at_end and self.state.best_model_checkpoint is not None:
            dist.barrier()
            self._load_best_model()
        return self.state


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    train = TensorDataset(torch.randn(8192, 64), torch.randint(0, 10, (8192,)))
    evals = TensorDataset(torch.randn(1024, 64), torch.randint(0, 10, (1024,)))
    model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 10))
    state = Trainer(model, train, evals, output_dir="runs/classifier").train()
    if dist.get_rank() == 0:
        print("best checkpoint:", state.best_model_checkpoint)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
