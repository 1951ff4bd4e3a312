# expect: missing-distributed-sampler
# The loader comes from a local builder, shuffle=is_train, called with is_train=True: no DistributedSampler.
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def build_dataloader(dataset, batch_size, is_train):
    return DataLoader(dataset, batch_size=batch_size, shuffle=is_train, num_workers=2)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(4, 4).cuda(), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = build_dataloader(TensorDataset(torch.randn(64, 4)), 8, is_train=True)
    for epoch in range(3):
        for (x,) in loader:
            loss = model(x.cuda()).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
