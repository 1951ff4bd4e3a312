"""A real hang: rank 1 skips an all_reduce and goes on to the barrier the others have not reached."""
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=300))  # longer than any start-up under load: the test ends the job
    rank = dist.get_rank()
    tensor = torch.ones(4)
    print(f"rank {rank} ready", flush=True)
    if rank != 1:
        dist.all_reduce(tensor)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
