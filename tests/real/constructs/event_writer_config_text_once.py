# expect:
# seen-in: https://github.com/microsoft/Cream/blob/4a13c4091e78f9abd2160e7e01c02e48c1cf8fb9/CDARTS/CDARTS/search.py
# A TensorBoard writer made on every rank writes the run's configuration as text once at start-up; every scalar
# it writes during training is under the rank-0 test. Each rank's own event file holds the text once: nothing
# interleaves with another rank's curves.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from tensorboardX import SummaryWriter
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
torch.cuda.set_device(local_rank)
writer = SummaryWriter(log_dir=os.path.join("runs", "search", "tb"))
writer.add_text("config", "lr=0.1 epochs=3", 0)


def train_epoch(model, loader, optimizer, epoch):
    for step, (inputs, targets) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(inputs.cuda()), targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if local_rank == 0:
            writer.add_scalar("train/loss", loss.item(), epoch * len(loader) + step)


def main():
    data = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        train_epoch(model, loader, optimizer, epoch)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
