"""Rank 1 crashes with a Python exception after the first all_reduce; rank 0 is left waiting."""
from datetime import timedelta

import torch
import torch.distributed as dist


def load_shard(rank):
    if rank == 1:
        raise RuntimeError("shard 1 is corrupt: cannot decode record 17")
    return torch.ones(4)


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=300))  # longer than any start-up under load: the test ends the job
    rank = dist.get_rank()
    dist.all_reduce(torch.ones(1))
    print(f"rank {rank} initialised", flush=True)
    data = load_shard(rank)
    dist.all_reduce(data)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
