# expect: cpu-oversubscribed
# source: https://github.com/microsoft/hi-ml/pull/268
# reason: The reviewer points out that num_workers=os.cpu_count() applies per GPU process, overloading the CPUs by the number of GPUs, and suggests cpu_count // gpu_count.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    tiles = TensorDataset(torch.randn(20000, 3, 224, 224), torch.randint(0, 2, (20000,)))
    sampler = DistributedSampler(tiles)
    dataloader_kwargs = dict(num_workers=os.cpu_count(), pin_memory=True)
    loader = DataLoader(tiles, batch_size=64, sampler=sampler, **dataloader_kwargs)
    model = DDP(nn.Sequential(nn.Conv2d(3, 16, 3, 2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                              nn.Linear(16, 2)).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(50):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
