# expect:
# seen-in: https://github.com/huggingface/pytorch-image-models/blob/aa4b5850c1543fa488abf260f18390eda46cf85d/legacy_train.py
# A rank-0 guard spelled through a helper of the "primary" family from a sibling module: utils.is_primary(args).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as NativeDDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

import utils


def main():
    args = utils.parse_args()
    args.local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    args.rank = dist.get_rank()
    args.world_size = dist.get_world_size()
    device = torch.device("cuda", args.local_rank)
    model = NativeDDP(nn.Linear(64, 10).to(device), device_ids=[args.local_rank])
    if utils.is_primary(args):
        print(f"Model created, param count: {sum(p.numel() for p in model.parameters())}")
    data = TensorDataset(torch.randn(4096, 64), torch.randint(0, 10, (4096,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if utils.is_primary(args) and step % 50 == 0:
                print(f"Train: {epoch} [{step}/{len(loader)}] loss {loss.item():.3f}")
        if utils.is_primary(args):
            torch.save(model.module.state_dict(), f"checkpoint-{epoch}.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
