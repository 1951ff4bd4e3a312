# expect:
# seen-in: https://github.com/microsoft/CvT/blob/f851e681966390779b71380d2600b52360ff4fe1/tools/train.py
# (with its lib/core/function.py)
# A TensorBoard writer built on every rank and kept in a dict that the epoch functions read; they write to it only
# on the main process. The other ranks' event files stay empty (each process has its own file): nothing clashes.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from tensorboardX import SummaryWriter
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def run_epoch(model, loader, optimizer, writer_dict):
    total = 0.0
    for inputs, targets in loader:
        loss = nn.functional.cross_entropy(model(inputs.cuda()), targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    if writer_dict and is_main_process():
        writer = writer_dict["writer"]
        writer.add_scalar("train_loss", total / len(loader), writer_dict["train_steps"])
        writer_dict["train_steps"] += 1


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    writer_dict = {"writer": SummaryWriter(logdir="runs/exp"), "train_steps": 0}
    for epoch in range(3):
        sampler.set_epoch(epoch)
        run_epoch(model, loader, optimizer, writer_dict)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
