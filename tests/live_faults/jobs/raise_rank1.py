"""Rank 1 raises while reading its labels; rank 0 goes on to the next all_reduce."""
from datetime import timedelta

import torch
import torch.distributed as dist


def read_labels(rank):
    if rank == 1:
        raise KeyError("label 'cat' missing from class map")
    return torch.zeros(4)


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    dist.barrier()
    labels = read_labels(rank)
    dist.all_reduce(labels)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
