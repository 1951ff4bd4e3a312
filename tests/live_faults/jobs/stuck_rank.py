"""Rank 1 never joins the all_reduce: it sleeps in its data loading while rank 0 waits in the collective."""
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def load_batch(rank):
    if rank == 1:
        time.sleep(3600)  # a stuck read: this rank never reaches the collective
    return torch.ones(4)


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=int(os.environ.get("JOB_TIMEOUT_S", "30"))))
    rank = dist.get_rank()
    print(f"rank {rank} ready", flush=True)
    dist.all_reduce(load_batch(rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
