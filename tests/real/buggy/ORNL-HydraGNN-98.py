# expect: missing-set-epoch
# source: https://github.com/ORNL/HydraGNN/pull/98
# reason: The training driver built DistributedSampler-backed train/val/test loaders in a helper and iterated them for many epochs without ever calling set_epoch, so every epoch replayed the same ordering on every rank; the merged fix calls set_epoch(epoch) on each sampler at the start of the epoch.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset, random_split
from torch.utils.data.distributed import DistributedSampler


CONFIG = {
    "num_epoch": 100,
    "batch_size": 32,
    "learning_rate": 1e-3,
    "hidden_dim": 64,
    "num_features": 16,
}


def setup_ddp():
    world_size = int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("WORLD_SIZE", 1)))
    world_rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("RANK", 0)))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "8889")
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend=backend, world_size=world_size, rank=world_rank)
    return world_size, world_rank


def get_device(world_rank):
    if torch.cuda.is_available():
        local = world_rank % torch.cuda.device_count()
        torch.cuda.set_device(local)
        return torch.device("cuda", local)
    return torch.device("cpu")


def dataset_loading_and_splitting(config, world_size, world_rank):
    data = TensorDataset(torch.randn(6000, config["num_features"]), torch.randn(6000, 1))
    trainset, valset, testset = random_split(data, [4800, 600, 600], generator=torch.Generator().manual_seed(0))
    loaders = []
    for subset in (trainset, valset, testset):
        sampler = DistributedSampler(subset, num_replicas=world_size, rank=world_rank)
        loaders.append(DataLoader(subset, batch_size=config["batch_size"], sampler=sampler))
    return loaders


class GraphRegressor(nn.Module):
    def __init__(self, in_dim, hidden):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.layers(x)


def train(loader, model, optimizer, device):
    model.train()
    total = 0.0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * x.size(0)
    return total / len(loader.dataset)


@torch.no_grad()
def validate(loader, model, device):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += nn.functional.mse_loss(model(x.to(device)), y.to(device), reduction="sum").item()
    return total / len(loader.dataset)


def train_validate_test(model, optimizer, train_loader, val_loader, test_loader, config, world_rank, device):
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=5)
    for epoch in range(config["num_epoch"]):
        train_mae = train(train_loader, model, optimizer, device)
        val_mae = validate(val_loader, model, device)
        test_mae = validate(test_loader, model, device)
        scheduler.step(val_mae)
        if world_rank == 0:
            print(f"Epoch: {epoch:02d}, Train MAE: {train_mae:.8f}, Val MAE: {val_mae:.8f}, Test MAE: {test_mae:.8f}")


def run_training():
    world_size, world_rank = setup_ddp()
    device = get_device(world_rank)
    train_loader, val_loader, test_loader = dataset_loading_and_splitting(CONFIG, world_size, world_rank)
    torch.manual_seed(0)
    model = GraphRegressor(CONFIG["num_features"], CONFIG["hidden_dim"]).to(device)
    model = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.AdamW(model.parameters(), lr=CONFIG["learning_rate"])
    train_validate_test(model, optimizer, train_loader, val_loader, test_loader, CONFIG, world_rank, device)


if __name__ == "__main__":
    run_training()
