# expect: none
import os

import torch
import torch.distributed as dist


def collect(t, rank, world):
    if rank == 0:
        parts = [torch.zeros_like(t) for _ in range(world)]
        dist.gather(t, gather_list=parts, dst=0)
        return torch.cat(parts)
    else:
        dist.gather(t, dst=0)
        return None


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    result = collect(torch.full((2,), float(rank)), rank, world)
    if rank == 0:
        print(result)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
