# expect: collective-mismatch
# source: https://github.com/deepspeedai/DeepSpeed/pull/801
# reason: The trainer saved the DeepSpeed engine's checkpoint only on the world's process zero and the run hung there; DeepSpeed answered (issue 797) that every process must call save_checkpoint, which synchronises the ranks, and this PR wrote that requirement into the docs.
import argparse
import os

import deepspeed
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Seq2SeqTrainer:
    def __init__(self, model, args, train_dataset):
        self.args = args
        self.train_dataset = train_dataset
        self.global_step = 0
        self.deepspeed, self.optimizer, _, self.lr_scheduler = deepspeed.initialize(
            args=args, model=model, model_parameters=model.parameters())

    def is_world_process_zero(self) -> bool:
        return torch.distributed.get_rank() == 0

    def get_train_dataloader(self):
        sampler = DistributedSampler(self.train_dataset)
        return DataLoader(self.train_dataset, batch_size=self.args.per_device_batch_size, sampler=sampler), sampler

    def _save_checkpoint(self):
        output_dir = os.path.join(self.args.output_dir, f"checkpoint-{self.global_step}")
        if self.is_world_process_zero():
            os.makedirs(output_dir, exist_ok=True)
            self.deepspeed.save_checkpoint(output_dir)
            torch.save({"global_step": self.global_step}, os.path.join(output_dir, "trainer_state.pt"))

    def train(self):
        loader, sampler = self.get_train_dataloader()
        for epoch in range(self.args.num_train_epochs):
            sampler.set_epoch(epoch)
            for src, tgt in loader:
                src, tgt = src.to(self.deepspeed.device), tgt.to(self.deepspeed.device)
                loss = nn.functional.cross_entropy(self.deepspeed(src), tgt)
                self.deepspeed.backward(loss)
                self.deepspeed.step()
                self.global_step += 1
                if self.global_step % self.args.save_steps == 0:
                    self._save_checkpoint()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--output_dir", default="output")
    parser.add_argument("--num_train_epochs", type=int, default=2)
    parser.add_argument("--per_device_batch_size", type=int, default=8)
    parser.add_argument("--save_steps", type=int, default=500)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    deepspeed.init_distributed()
    model = nn.Sequential(nn.Embedding(32000, 512), nn.Flatten(), nn.Linear(512 * 16, 32000))
    data = TensorDataset(torch.randint(0, 32000, (20000, 16)), torch.randint(0, 32000, (20000,)))
    Seq2SeqTrainer(model, args, data).train()


if __name__ == "__main__":
    main()
