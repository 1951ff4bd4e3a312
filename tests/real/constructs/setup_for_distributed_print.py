# expect:
# seen-in: https://github.com/facebookresearch/dino/blob/7c446df5b9f45747937fb0d72314eb9f7b66930a/main_dino.py
# print is replaced at set-up so that only the master prints (print(..., force=True) bypasses it).
import builtins
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def setup_for_distributed(is_master):
    builtin_print = builtins.print

    def print(*args, **kwargs):
        force = kwargs.pop("force", False)
        if is_master or force:
            builtin_print(*args, **kwargs)

    builtins.print = print


def init_distributed_mode():
    rank = int(os.environ["RANK"])
    gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(gpu)
    dist.init_process_group(backend="nccl", init_method="env://")
    print(f"| distributed init (rank {rank})", force=True)
    dist.barrier()
    setup_for_distributed(rank == 0)
    return gpu


def main():
    gpu = init_distributed_mode()
    model = nn.parallel.DistributedDataParallel(nn.Linear(384, 65536).cuda(), device_ids=[gpu])
    data = TensorDataset(torch.randn(10000, 384))
    sampler = DistributedSampler(data, shuffle=True)
    loader = DataLoader(data, sampler=sampler, batch_size=64, num_workers=10, pin_memory=True, drop_last=True)
    optimizer = torch.optim.AdamW(model.parameters())
    print(f"Data loaded: there are {len(data)} images.")
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for it, (x,) in enumerate(loader):
            loss = model(x.cuda(non_blocking=True)).logsumexp(-1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if it % 10 == 0:
                print(f"Epoch: [{epoch}] [{it}/{len(loader)}] loss: {loss.item():.6f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
