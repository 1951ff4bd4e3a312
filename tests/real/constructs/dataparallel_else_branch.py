# expect:
# seen-in: https://github.com/facebookresearch/simsiam/blob/a7bc1772896d0dad0806c51f0bb6f3b16d290468/main_lincls.py
# DistributedDataParallel on the distributed path; nn.DataParallel only in the explicit non-distributed else branch.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=90)
    args = p.parse_args()
    args.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    model = nn.Sequential(nn.Linear(2048, 1000))
    if args.distributed:
        args.gpu = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(args.gpu)
        dist.init_process_group(backend="nccl", init_method="env://")
        model.cuda(args.gpu)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    else:
        # DataParallel will divide and allocate batch_size to all available GPUs
        model = torch.nn.DataParallel(model).cuda()
    data = TensorDataset(torch.randn(10000, 2048), torch.randint(0, 1000, (10000,)))
    sampler = DistributedSampler(data) if args.distributed else None
    loader = DataLoader(data, batch_size=256, shuffle=sampler is None, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        if args.distributed:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
