# expect: none
# The YOLO / HF-examples spelling: local_rank in (-1, 0) guards, zero-first barriers in two ifs.
import argparse
import os

import torch
import torch.distributed as dist
from datasets import load_dataset
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", -1)))
    opt = parser.parse_args()
    if opt.local_rank != -1:
        torch.cuda.set_device(opt.local_rank)
        dist.init_process_group(backend="nccl")
    if opt.local_rank not in (-1, 0):
        dist.barrier()
    data = load_dataset("mnist", split="train").with_format("torch")
    if opt.local_rank == 0:
        dist.barrier()
    sampler = DistributedSampler(data) if opt.local_rank != -1 else None
    loader = DataLoader(data, batch_size=64, sampler=sampler, shuffle=sampler is None)
    model = torch.nn.Linear(784, 10).cuda()
    if opt.local_rank != -1:
        model = DDP(model, device_ids=[opt.local_rank], output_device=opt.local_rank)
    for epoch in range(2):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for batch in loader:
            model(batch["image"].float().view(-1, 784).cuda()).sum().backward()
        if opt.local_rank in (-1, 0):
            print("epoch", epoch)
            torch.save(model.state_dict() if opt.local_rank == -1 else model.module.state_dict(), "last.pt")
    if opt.local_rank != -1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
