# expect: collective-mismatch
# source: https://github.com/jpata/particleflow/pull/233
# reason: Multi-GPU training hung at a dist.barrier(): validation runs on rank 0 only but called the DDP model itself (model(...)) inside a helper, so rank 0 entered DDP's forward collectives (the buffer broadcast) alone; the merged fix validates through model.module.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class MLPF(nn.Module):
    def __init__(self, input_dim=55, width=256, num_classes=9):
        super().__init__()
        self.nn = nn.Sequential(nn.Linear(input_dim, width), nn.ELU(), nn.BatchNorm1d(width), nn.Linear(width, width),
                                nn.ELU())
        self.classifier = nn.Linear(width, num_classes)
        self.regressor = nn.Linear(width, 4)

    def forward(self, x):
        h = self.nn(x)
        return self.classifier(h), self.regressor(h)


def train_and_valid(rank, model, optimizer, loader, is_train=True):
    model.train(is_train)
    total = 0.0
    for x, y_cls, y_reg in loader:
        x, y_cls, y_reg = x.to(rank), y_cls.to(rank), y_reg.to(rank)
        with torch.set_grad_enabled(is_train):
            pred_cls, pred_reg = model(x)
            loss = nn.functional.cross_entropy(pred_cls, y_cls) + nn.functional.mse_loss(pred_reg, y_reg)
        if is_train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / max(len(loader), 1)


def run(rank, world_size, num_epochs=50):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    model = DistributedDataParallel(nn.SyncBatchNorm.convert_sync_batchnorm(MLPF()).to(rank), device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train_set = TensorDataset(torch.randn(20000, 55), torch.randint(0, 9, (20000,)), torch.randn(20000, 4))
    valid_set = TensorDataset(torch.randn(2000, 55), torch.randint(0, 9, (2000,)), torch.randn(2000, 4))
    sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=256, sampler=sampler)
    valid_loader = DataLoader(valid_set, batch_size=256)
    for epoch in range(num_epochs):
        sampler.set_epoch(epoch)
        train_loss = train_and_valid(rank, model, optimizer, train_loader, is_train=True)
        if rank == 0:
            valid_loss = train_and_valid(rank, model, optimizer, valid_loader, is_train=False)
            print(f"epoch {epoch} train {train_loss:.4f} valid {valid_loss:.4f}")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    run(int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"]))
