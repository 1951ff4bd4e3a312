# expect: missing-distributed-sampler, missing-set-device
# Harder: setup split across helpers; the loader is built in a function returning it.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def build_loader(bs):
    ds = TensorDataset(torch.randn(640, 6), torch.randn(640, 1))
    return DataLoader(ds, batch_size=bs, shuffle=True, drop_last=True)


def wrap(model, local_rank):
    return DDP(model.to(f"cuda:{local_rank}"), device_ids=[local_rank])


def main():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    dist.init_process_group(backend="nccl", init_method="env://")
    model = wrap(torch.nn.Linear(6, 1), local_rank)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    for epoch in range(3):
        for x, y in build_loader(32):
            loss = (model(x.cuda(local_rank)) - y.cuda(local_rank)).abs().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
