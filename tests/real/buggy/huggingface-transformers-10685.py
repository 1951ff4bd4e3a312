# expect: no-barrier-before-checkpoint-load
# source: https://github.com/huggingface/transformers/pull/10685
# reason: With load_best_model_at_end a process could reach the final load before process 0 had finished saving the checkpoint; the merged fix adds a distributed barrier before loading.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Trainer:
    def __init__(self, model, train_dataset, output_dir, local_rank):
        self.local_rank = local_rank
        self.device = torch.device("cuda", local_rank)
        self.model = DDP(model.to(self.device), device_ids=[local_rank])
        self.sampler = DistributedSampler(train_dataset)
        self.loader = DataLoader(train_dataset, batch_size=16, sampler=self.sampler)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=5e-5)
        self.output_dir = output_dir
        self.best_model_checkpoint = None
        self.best_metric = None

    def is_world_process_zero(self):
        return dist.get_rank() == 0

    def _save_checkpoint(self, epoch, metric):
        path = os.path.join(self.output_dir, f"checkpoint-{epoch}.pt")
        if self.is_world_process_zero():
            torch.save(self.model.module.state_dict(), path)
        if self.best_metric is None or metric < self.best_metric:
            self.best_metric, self.best_model_checkpoint = metric, path

    def train(self, epochs, load_best_model_at_end=True):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.loader:
                loss = nn.functional.cross_entropy(self.model(x.to(self.device)), y.to(self.device))
                loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
            self._save_checkpoint(epoch, loss.item())
        if load_best_model_at_end and self.best_model_checkpoint is not None:
            state_dict = torch.load(self.best_model_checkpoint, map_location=self.device)
            self.model.module.load_state_dict(state_dict)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(4000, 32), torch.randint(0, 2, (4000,)))
    Trainer(nn.Linear(32, 2), data, "out", local_rank).train(epochs=3)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
