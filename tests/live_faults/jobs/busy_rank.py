"""Rank 1 computes far longer than the collective timeout; rank 0's all_reduce times out (gloo)."""
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=5))
    rank = dist.get_rank()
    print(f"rank {rank} ready", flush=True)
    if rank == 1:
        end = time.monotonic() + 60
        while time.monotonic() < end:  # busy: the job never looks stalled, only the collective times out
            sum(range(10_000))
    dist.all_reduce(torch.ones(4))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
