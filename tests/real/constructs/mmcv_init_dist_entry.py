# expect:
# seen-in: https://github.com/NVlabs/GroupViT/blob/13b786155a1dfffe4703f40d028c92be58e1178d/main_group_vit.py
# mmcv 1.x set-up: init_dist('pytorch') sets the device from RANK and starts the group, the model is wrapped in
# mmcv's MMDistributedDataParallel (a DDP subclass), the loader shards by rank; no torch.distributed call of its own.
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from mmcv.parallel import MMDistributedDataParallel
from mmcv.runner import get_dist_info, init_dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train(model, loader, sampler, epochs):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), f"epoch{epoch}.pth")
        dist.barrier()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, required=True)
    parser.parse_args()
    init_dist("pytorch")
    rank, world_size = get_dist_info()
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = nn.Linear(8, 1).cuda()
    model = MMDistributedDataParallel(model, device_ids=[torch.cuda.current_device()], broadcast_buffers=False)
    train(model, loader, sampler, 2)


if __name__ == "__main__":
    main()
