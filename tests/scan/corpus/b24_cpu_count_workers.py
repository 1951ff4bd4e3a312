# expect: cpu-oversubscribed
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    ds = TensorDataset(torch.randn(10000, 3, 32, 32))
    sampler = DistributedSampler(ds)
    loader = DataLoader(ds, batch_size=256, sampler=sampler, num_workers=os.cpu_count(), pin_memory=True)
    model = DDP(torch.nn.Conv2d(3, 8, 3).cuda(), device_ids=[local_rank])
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            model(x.cuda()).mean().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
