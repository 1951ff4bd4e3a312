import os

import torch
import torch.distributed

__all__ = ["setup_dist_env", "dist_barrier", "is_master", "get_dist_local_rank"]


def get_dist_local_rank() -> int:
    return int(os.environ["LOCAL_RANK"])


def is_master() -> bool:
    return int(os.environ["RANK"]) == 0


def dist_barrier() -> None:
    if torch.distributed.is_initialized():
        torch.distributed.barrier()


def setup_dist_env() -> None:
    torch.distributed.init_process_group(backend="nccl")
    torch.cuda.set_device(get_dist_local_rank())
