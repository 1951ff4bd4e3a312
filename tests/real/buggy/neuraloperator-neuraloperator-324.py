# expect: hardcoded-cuda0, logging-from-all-ranks
# source: https://github.com/neuraloperator/neuraloperator/pull/324
# reason: In single-machine DDP the checkpoint callback wrote the training state from every rank to the same files and, on resume, every rank read them back with torch.load() and no map_location (all onto the device they were saved from); the merged fix saves on rank 0 only and loads on all ranks with map_location set to the rank's device.
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def save_training_state(save_dir, save_name, model, optimizer=None, scheduler=None):
    save_dir = Path(save_dir)
    save_dir.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), save_dir / f"{save_name}_state_dict.pt")
    if optimizer is not None:
        torch.save(optimizer.state_dict(), save_dir / "optimizer.pt")
    if scheduler is not None:
        torch.save(scheduler.state_dict(), save_dir / "scheduler.pt")


def load_training_state(save_dir, save_name, model, optimizer=None, scheduler=None):
    save_dir = Path(save_dir)
    model.load_state_dict(torch.load(save_dir / f"{save_name}_state_dict.pt"))
    if optimizer is not None:
        optimizer.load_state_dict(torch.load(save_dir / "optimizer.pt"))
    if scheduler is not None:
        scheduler.load_state_dict(torch.load(save_dir / "scheduler.pt"))
    return model, optimizer, scheduler


class CheckpointCallback:
    def __init__(self, save_dir, save_interval=1, resume_from_dir=None):
        self.save_dir = Path(save_dir)
        self.save_interval = save_interval
        self.resume_from_dir = Path(resume_from_dir) if resume_from_dir else None

    def on_train_start(self, model, optimizer, scheduler):
        if self.resume_from_dir is not None and (self.resume_from_dir / "model_state_dict.pt").exists():
            load_training_state(self.resume_from_dir, "model", model, optimizer, scheduler)

    def on_epoch_end(self, epoch, model, optimizer, scheduler):
        if epoch % self.save_interval == 0:
            save_training_state(self.save_dir, "model", model, optimizer, scheduler)


class FNOBlock(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.lift = nn.Conv1d(1, width, 1)
        self.mix = nn.Conv1d(width, width, 5, padding=2)
        self.proj = nn.Conv1d(width, 1, 1)

    def forward(self, x):
        return self.proj(torch.nn.functional.gelu(self.mix(self.lift(x))))


class Trainer:
    def __init__(self, model, n_epochs, device, callbacks=()):
        self.model = model
        self.n_epochs = n_epochs
        self.device = device
        self.callbacks = list(callbacks)

    def train(self, train_loader, optimizer, scheduler, module):
        for cb in self.callbacks:
            cb.on_train_start(module, optimizer, scheduler)
        for epoch in range(self.n_epochs):
            train_loader.sampler.set_epoch(epoch)
            for x, y in train_loader:
                x, y = x.to(self.device), y.to(self.device)
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            scheduler.step()
            for cb in self.callbacks:
                cb.on_epoch_end(epoch, module, optimizer, scheduler)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    device = torch.device(f"cuda:{local_rank}")

    data = TensorDataset(torch.randn(1000, 1, 64), torch.randn(1000, 1, 64))
    loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data))
    module = FNOBlock().to(device)
    model = DDP(module, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
    trainer = Trainer(model, n_epochs=20, device=device,
                      callbacks=[CheckpointCallback("./checkpoints", resume_from_dir="./checkpoints")])
    trainer.train(loader, optimizer, scheduler, module)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
