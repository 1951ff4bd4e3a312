# expect:
# seen-in: https://github.com/sail-sg/poolformer/blob/a075575b8b3dc3c76ecc5c49985d156167372bfa/train.py
# An experiment tracker started only behind a `store_true` option (off by default) before the group is joined; its
# metrics are written from rank 0 only. The default run starts no tracker.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

try:
    import wandb
    has_wandb = True
except ImportError:
    has_wandb = False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log-wandb", action="store_true", help="log metrics to Weights & Biases")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    if args.log_wandb and has_wandb:
        wandb.init(project="classifier", config=vars(args))
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(2048, 16), torch.randint(0, 4, (2048,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    model = DistributedDataParallel(nn.Linear(16, 4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0 and args.log_wandb and has_wandb:
            wandb.log({"epoch": epoch, "loss": loss.item()})
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
