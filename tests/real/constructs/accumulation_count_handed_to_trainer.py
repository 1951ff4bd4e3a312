# expect:
# seen-in: https://github.com/huggingface/accelerate/blob/16cb6eb80dd9aa8b4df1a63ef57863e455d53b83/examples/nlp_example.py
# The accumulation count is 1 unless the requested batch does not fit one GPU, and it is handed to a trainer
# class that runs the loop: as shipped no micro-step is ever skipped, so there is no extra all-reduce to save.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

MAX_GPU_BATCH = 16


class LoopRunner:
    def __init__(self, net, opt, accumulate_every):
        self.net = net
        self.opt = opt
        self.accumulate_every = accumulate_every

    def run(self, loader, sampler, epochs):
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for i, (x, y) in enumerate(loader):
                loss = nn.functional.mse_loss(self.net(x.cuda()), y.cuda()) / self.accumulate_every
                loss.backward()
                if i % self.accumulate_every == 0:
                    self.opt.step()
                    self.opt.zero_grad()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=16)
    o = p.parse_args()
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    every = 1
    batch = o.batch
    if o.batch > MAX_GPU_BATCH:
        every = o.batch // MAX_GPU_BATCH
        batch = MAX_GPU_BATCH
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=batch, sampler=sampler)
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[local])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    LoopRunner(net, opt, every).run(loader, sampler, 2)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
