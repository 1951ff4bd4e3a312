"""Helpers for distributed training: set-up, the device of this process, tear-down."""
import os

import torch
import torch.distributed as dist


def setup_dist():
    if dist.is_initialized():
        return
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group(backend="nccl", init_method="env://")


def dev():
    return torch.device("cuda", int(os.environ["LOCAL_RANK"]))


def cleanup():
    dist.destroy_process_group()
