# expect:
# seen-in: https://github.com/sail-sg/poolformer/blob/a075575b8b3dc3c76ecc5c49985d156167372bfa/train.py
# seen-in: https://github.com/facebookresearch/dlrm/blob/090956ee2319ddd349a42232958aefccfe3f7b0a/dlrm_s_pytorch.py
# "cuda:0" is the default the distributed path overwrites with the local rank's GPU (and, for the batches, the
# other arm of a per-rank pick): the constant only serves the one-process run.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    args = parser.parse_args()
    args.distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    args.device = "cuda:0"
    if args.distributed:
        args.device = "cuda:%d" % args.local_rank
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
        batch_device = torch.device("cuda", args.local_rank)
    else:
        batch_device = torch.device("cuda", 0)

    data = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
    sampler = DistributedSampler(data) if args.distributed else None
    loader = DataLoader(data, batch_size=16, sampler=sampler, shuffle=sampler is None)
    model = nn.Linear(8, 2).to(args.device)
    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(batch_device)), y.to(batch_device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
