"""A healthy 2-rank gloo job: init, one all_reduce, barrier."""
from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    tensor = torch.ones(4)
    dist.all_reduce(tensor)
    assert tensor[0].item() == dist.get_world_size()
    dist.barrier()
    print(f"rank {dist.get_rank()} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
