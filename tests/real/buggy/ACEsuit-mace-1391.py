# expect: logging-from-all-ranks
# source: https://github.com/ACEsuit/mace/pull/1391
# reason: MACE's run_train logged to Weights & Biases from every process in distributed training; the maintainer's change guards the wandb logging with rank == 0 to stop duplicate and erroring log calls on the non-primary ranks.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import wandb
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class DistributedEnvironment:
    def __init__(self):
        self.rank = int(os.environ["RANK"])
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.world_size = int(os.environ["WORLD_SIZE"])


class InteratomicPotential(nn.Module):
    def __init__(self, features=64, hidden=128):
        super().__init__()
        self.readout = nn.Sequential(nn.Linear(features, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, node_features):
        return self.readout(node_features).sum(dim=1).squeeze(-1)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="mace_run")
    parser.add_argument("--wandb", action="store_true")
    parser.add_argument("--wandb_project", default="mace")
    parser.add_argument("--max_num_epochs", type=int, default=50)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.01)
    return parser.parse_args()


def take_step(model, batch, optimizer, device):
    features, energies = batch[0].to(device), batch[1].to(device)
    loss = torch.mean((model(features) - energies) ** 2)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()


def train(model, loader, sampler, optimizer, args, device, env):
    for epoch in range(args.max_num_epochs):
        sampler.set_epoch(epoch)
        epoch_loss = torch.zeros((), device=device)
        for batch in loader:
            epoch_loss += take_step(model, batch, optimizer, device)
        dist.all_reduce(epoch_loss)
        epoch_loss /= env.world_size * len(loader)
        if args.wandb:
            wandb.log({"epoch": epoch, "train_loss": epoch_loss.item()})
        if env.rank == 0:
            torch.save(model.module.state_dict(), f"{args.name}_epoch-{epoch}.model")


def main():
    args = parse_args()
    env = DistributedEnvironment()
    torch.cuda.set_device(env.local_rank)
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda", env.local_rank)

    if args.wandb:
        wandb.init(project=args.wandb_project, name=args.name, config=vars(args))

    data = TensorDataset(torch.randn(2048, 24, 64), torch.randn(2048))
    sampler = DistributedSampler(data, num_replicas=env.world_size, rank=env.rank, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, drop_last=True)
    model = DistributedDataParallel(InteratomicPotential().to(device), device_ids=[env.local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    train(model, loader, sampler, optimizer, args, device, env)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
