# expect:
# seen-in: https://github.com/facebookresearch/lingua/blob/437d680e521873bb5971067148a69587790da853/apps/main/train.py
# (in its lingua/metrics.py)
# A metrics logger starts the wandb run on the master rank only and logs on every rank behind
# `wandb.run is not None`: only the process that started the run logs to it.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Metrics:
    def __init__(self, project):
        self.project = project

    def open(self):
        if dist.get_rank() == 0:
            wandb.init(project=self.project)

    def log(self, values, step):
        if wandb.run is not None:
            wandb.log(values, step=step)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    metrics = Metrics("demo")
    metrics.open()
    step = 0
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optim.zero_grad()
            loss.backward()
            optim.step()
            step += 1
            metrics.log({"loss": loss.item()}, step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
