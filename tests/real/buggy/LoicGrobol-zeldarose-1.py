# expect: batch-size-mismatch
# source: https://github.com/LoicGrobol/zeldarose/pull/1
# reason: The merged fix: under DDP the tuning batch size was effectively multiplied by the number of GPUs, because accumulation was computed without the world size.
import argparse
import contextlib
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=256, help="samples per optimizer step")
    p.add_argument("--device-batch-size", type=int, default=16)
    args = p.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    accumulate_grad_batches = args.batch_size // args.device_batch_size
    data = TensorDataset(torch.randint(0, 50000, (100000, 128)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=args.device_batch_size, sampler=sampler)
    model = DDP(nn.Sequential(nn.Embedding(50000, 256), nn.Linear(256, 50000)).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for i, (ids,) in enumerate(loader):
            ids = ids.to(device)
            step_now = (i + 1) % accumulate_grad_batches == 0
            with contextlib.nullcontext() if step_now else model.no_sync():
                loss = nn.functional.cross_entropy(model(ids).flatten(0, 1), ids.flatten()) / accumulate_grad_batches
                loss.backward()
            if step_now:
                optimizer.step()
                optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
