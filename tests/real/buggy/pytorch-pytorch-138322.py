# expect: collective-mismatch
# source: https://github.com/pytorch/pytorch/issues/138322
# reason: A barrier issued on every rank except one (`if rank != 3:`) followed by a barrier on all ranks: the skipping rank's later barrier matches the others' first one, so ranks leave early while rank 0 hangs until the timeout; the maintainers' answer is that every rank must issue the same collectives in the same order.
import os
from datetime import timedelta

import torch
import torch.distributed as dist

SPARE_RANK = 3


def setup():
    rank = int(os.getenv("RANK", "0"))
    local_rank = int(os.getenv("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", timeout=timedelta(minutes=1))
    return rank


def stage_inputs(rank):
    if rank != SPARE_RANK:
        torch.ones(1024, device="cuda").sum()
        dist.barrier()


def main():
    rank = setup()
    stage_inputs(rank)
    dist.barrier()
    print(f"{rank} done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
