import functools
import os

import torch
import torch.distributed as dist


def setup():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def leader_only(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if dist.get_rank() == 0:
            return func(*args, **kwargs)
    return wrapper


class EpochLoader:
    def __init__(self, loader):
        self.loader, self.epoch = loader, 0
        self.it = iter(loader)

    def __len__(self):
        return len(self.loader)

    def __next__(self):
        try:
            return next(self.it)
        except StopIteration:
            self.epoch += 1
            self.loader.sampler.set_epoch(self.epoch)
            self.it = iter(self.loader)
            return next(self.it)
