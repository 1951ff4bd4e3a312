# expect:
# seen-in: https://github.com/facebookresearch/sam2/blob/2b90b9f5ceec907a1c18123530e92e794ad901a4/training/train.py
# (in its training/trainer.py)
# A trainer keeps `self.distributed_rank` (unpacked from a helper) and returns early on the other ranks before
# handing the checkpoint to a private writer that saves to a temporary file and renames it.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def local_and_global_rank():
    return int(os.environ["LOCAL_RANK"]), int(os.environ["RANK"])


class Trainer:
    def __init__(self, model, loader):
        self.local_rank, self.distributed_rank = local_and_global_rank()
        torch.cuda.set_device(self.local_rank)
        self.model = DDP(model.cuda(), device_ids=[self.local_rank])
        self.loader = loader
        self.optim = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def save_checkpoint(self, epoch):
        state = {"model": self.model.module.state_dict(), "epoch": epoch}
        if self.distributed_rank != 0:
            return
        for name in ("last", f"epoch_{epoch}"):
            self._write(state, f"{name}.pt")

    def _write(self, state, path):
        partial = f"{path}.tmp"
        with open(partial, "wb") as handle:
            torch.save(state, handle)
        os.replace(partial, path)

    def fit(self, epochs):
        for epoch in range(epochs):
            self.loader.sampler.set_epoch(epoch)
            for x, y in self.loader:
                loss = nn.functional.mse_loss(self.model(x.cuda()), y.cuda())
                self.optim.zero_grad()
                loss.backward()
                self.optim.step()
            self.save_checkpoint(epoch)


def main():
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data))
    Trainer(nn.Linear(8, 1), loader).fit(3)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
