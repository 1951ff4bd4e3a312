"""Rank 1 is killed with SIGKILL (what the kernel's OOM killer does) after the first all_reduce."""
import os
import signal
from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    dist.all_reduce(torch.ones(1))
    print(f"rank {rank} step 1", flush=True)
    if rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    dist.all_reduce(torch.ones(1))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
