# expect: checkpoint-without-module
# source: https://github.com/facebookresearch/fairchem/pull/76
# reason: The trainer saved the DDP-wrapped model's state_dict, so checkpoints carried "module." prefixes and failed to load into a model that was not wrapped; the merged PR strips the prefix on load.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class ForcesNet(nn.Module):
    def __init__(self, hidden=256):
        super().__init__()
        self.embed = nn.Linear(3, hidden)
        self.interaction = nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())
        self.energy = nn.Linear(hidden, 1)
        self.forces = nn.Linear(hidden, 3)

    def forward(self, pos):
        h = self.interaction(self.embed(pos))
        return self.energy(h).sum(dim=1), self.forces(h)


class ForcesTrainer:
    def __init__(self, config, local_rank):
        self.config = config
        self.device = torch.device("cuda", local_rank)
        self.is_master = dist.get_rank() == 0
        self.model = DistributedDataParallel(ForcesNet().to(self.device), device_ids=[local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=config["lr"])
        data = TensorDataset(torch.randn(20000, 40, 3), torch.randn(20000, 1), torch.randn(20000, 40, 3))
        self.sampler = DistributedSampler(data)
        self.loader = DataLoader(data, batch_size=config["batch_size"], sampler=self.sampler)
        os.makedirs(config["checkpoint_dir"], exist_ok=True)

    def save(self, epoch, name="checkpoint.pt"):
        if self.is_master:
            torch.save({"epoch": epoch, "state_dict": self.model.state_dict(),
                        "optimizer": self.optimizer.state_dict(), "config": self.config},
                       os.path.join(self.config["checkpoint_dir"], name))

    def train(self):
        for epoch in range(self.config["max_epochs"]):
            self.sampler.set_epoch(epoch)
            for pos, energy, forces in self.loader:
                e_pred, f_pred = self.model(pos.to(self.device))
                energy_loss = (e_pred - energy.to(self.device)).abs().mean()
                loss = energy_loss + 100 * (f_pred - forces.to(self.device)).abs().mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if self.is_master:
                print(f"epoch {epoch}: loss {loss.item():.4f}")
            self.save(epoch)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    config = {"lr": 5e-4, "batch_size": 32, "max_epochs": 50, "checkpoint_dir": "checkpoints/s2ef"}
    ForcesTrainer(config, local_rank).train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
