# expect: gradient-checkpointing-conflict
# source: https://github.com/pytorch/pytorch/issues/24005
# reason: A flow model whose forward runs its blocks through torch.utils.checkpoint.checkpoint_sequential, wrapped in DDP with find_unused_parameters=True, fails in backward with "Expected to mark a variable ready only once"; the reporter's bisection with the maintainer: the same model without checkpointing works, and reentrant checkpointing does not support unused-parameter detection.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.checkpoint import checkpoint_sequential
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class CouplingBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(width // 2, width), nn.ReLU(), nn.Linear(width, width))

    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        shift, log_scale = self.net(a).chunk(2, dim=1)
        return torch.cat([a, b * torch.exp(torch.tanh(log_scale)) + shift], dim=1)


class Flow(nn.Module):
    def __init__(self, width=64, depth=12, segments=4, use_checkpoint=True):
        super().__init__()
        self.blocks = nn.Sequential(*[CouplingBlock(width) for _ in range(depth)])
        self.segments = segments
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        if self.use_checkpoint and self.training:
            return checkpoint_sequential(self.blocks, self.segments, x)
        return self.blocks(x)


class Runner:
    def __init__(self, hps):
        self.hps = hps
        self.rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.rank)
        dist.init_process_group(backend="nccl")
        flow = Flow(use_checkpoint=hps["checkpoint"]).cuda()
        self.model = nn.parallel.DistributedDataParallel(flow, device_ids=[self.rank], find_unused_parameters=True)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=hps["lr"])

    def train(self, dataset):
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=self.hps["batch"], sampler=sampler)
        for epoch in range(self.hps["epochs"]):
            sampler.set_epoch(epoch)
            for (x,) in loader:
                z = self.model(x.cuda())
                loss = 0.5 * (z ** 2).sum(1).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()


if __name__ == "__main__":
    hps = {"checkpoint": True, "lr": 1e-3, "batch": 64, "epochs": 10}
    Runner(hps).train(TensorDataset(torch.randn(8192, 64)))
