# expect: grad-accum-without-no-sync
# The trainer's train_step runs backward on every call and steps only every accum_steps calls; no no_sync anywhere.
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, local_rank, accum_steps=4):
        self.model = DDP(nn.Linear(4, 4).cuda(), device_ids=[local_rank])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.accum_steps = accum_steps
        self.global_step = 0

    def train_step(self, x):
        loss = self.model(x).sum() / self.accum_steps
        loss.backward()
        self.global_step += 1
        if self.global_step % self.accum_steps == 0:
            self.optimizer.step()
            self.optimizer.zero_grad()

    def fit(self, epochs):
        for epoch in range(epochs):
            for _ in range(100):
                self.train_step(torch.randn(8, 4).cuda())


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    Trainer(local_rank).fit(3)
    dist.destroy_process_group()
