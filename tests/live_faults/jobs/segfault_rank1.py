"""Rank 1 dereferences a null pointer in native code (as a broken extension would) after the first all_reduce."""
import ctypes
from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    dist.all_reduce(torch.ones(1))
    print(f"rank {rank} step 1", flush=True)
    if rank == 1:
        ctypes.string_at(0)
    dist.all_reduce(torch.ones(1))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
