# expect: hardcoded-cuda0
# GPU 0 spelled as defaults: a --device option defaulting to "cuda:0" that is used as is, a loss whose
# device parameter defaults to "cuda:0" and is never passed, and a .to(0).
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class AnchorLoss(nn.Module):
    def __init__(self, anchors, device="cuda:0"):
        super().__init__()
        self.anchors = torch.tensor(anchors, device=device)

    def forward(self, pred, target):
        return ((pred - target) ** 2).mean() + 0.0 * self.anchors.sum()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda:0")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(8, 8).to(args.device), device_ids=[local_rank])
    criterion = AnchorLoss([[1.0, 2.0]])
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 8))
    sampler = DistributedSampler(data)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in DataLoader(data, batch_size=16, sampler=sampler):
            loss = criterion(model(x.to(0)), y.to(args.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
