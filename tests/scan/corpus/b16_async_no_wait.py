# expect: mixed-sync-async-collectives
import os

import torch
import torch.distributed as dist


def sync_stats(stats):
    dist.all_reduce(stats, op=dist.ReduceOp.SUM, async_op=True)
    return stats / dist.get_world_size()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    stats = torch.ones(4, device="cuda")
    mean = sync_stats(stats)
    dist.barrier()
    if dist.get_rank() == 0:
        print(mean)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
