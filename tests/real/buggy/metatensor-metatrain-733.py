# expect: logging-from-all-ranks
# source: https://github.com/metatensor/metatrain/issues/733
# reason: Training on N devices created N wandb runs, N-1 of them empty; the agreed fix is to create the wandb logger only on the main process.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import wandb
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def train(options):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    if "wandb" in options:
        wandb.init(project=options["wandb"]["project"], name=options["wandb"]["name"], config=options)

    model = DistributedDataParallel(nn.Sequential(nn.Linear(64, 128), nn.SiLU(), nn.Linear(128, 1)).to(device),
                                    device_ids=[local_rank])
    data = TensorDataset(torch.randn(10000, 64), torch.randn(10000, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    optimizer = torch.optim.Adam(model.parameters(), lr=options["lr"])
    for epoch in range(options["epochs"]):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if "wandb" in options:
            wandb.log({"epoch": epoch, "loss": loss.item()})
    dist.destroy_process_group()


if __name__ == "__main__":
    train({"lr": 1e-3, "epochs": 100, "wandb": {"project": "pet", "name": "run"}})
