# expect: missing-distributed-sampler
# A runner keeps its loader on self (shuffle from the config) and steps the model in a method its epoch loop calls.
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


class Runner:
    def __init__(self, cfg, local_rank):
        self.device = torch.device("cuda", local_rank)
        self.model = DDP(nn.Linear(4, 4).to(self.device), device_ids=[local_rank])
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.data_loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=cfg["bs"], shuffle=cfg["shuffle"])

    def step(self, batch):
        loss = self.model(batch[0].to(self.device)).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

    def run(self, epochs):
        for epoch in range(epochs):
            for batch in self.data_loader:
                self.step(batch)


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    Runner({"bs": 8, "shuffle": True}, local_rank).run(3)
    dist.destroy_process_group()
