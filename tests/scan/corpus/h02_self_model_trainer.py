# expect: checkpoint-without-module, logging-from-all-ranks
# Harder: the wrapper lives on self and is saved from another method.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Engine:
    def __init__(self):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[self.local_rank])

    def save(self, path):
        torch.save(self.model.state_dict(), path)

    def run(self):
        for step in range(10):
            self.model(torch.randn(1, 4).cuda()).sum().backward()
        self.save("final.pt")
        dist.destroy_process_group()


if __name__ == "__main__":
    Engine().run()
