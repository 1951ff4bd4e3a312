# expect: missing-distributed-sampler
# A small hand-written "accelerator" whose prepare() only wraps the model in DDP and hands the loader back
# unchanged: unlike Accelerate's prepare it does not shard the loader, so every rank sees all the data.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


class MiniAccelerator:
    def __init__(self):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.device = torch.device("cuda", self.local_rank)

    def prepare(self, model, optimizer, loader):
        return DDP(model.to(self.device), device_ids=[self.local_rank]), optimizer, loader


def main():
    acc = MiniAccelerator()
    model = nn.Linear(16, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(torch.randn(512, 16), torch.randn(512, 4)), batch_size=32, shuffle=True)
    model, optimizer, loader = acc.prepare(model, optimizer, loader)
    for _ in range(5):
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.to(acc.device)), y.to(acc.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
