# expect:
# seen-in: https://github.com/salesforce/LAVIS/blob/506965b9c4a18c1e565bd32acaccabe0198433f7/train.py
# The runner saves checkpoints in a method under a project decorator that calls it on the main process only
# (its name says nothing), and the loaders are wrapped in a project class that calls sampler.set_epoch.
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from helpers import EpochLoader, leader_only, setup


class Runner:
    def __init__(self, model, loader):
        self.model, self.loader = model, loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train(self, epochs):
        for epoch in range(epochs):
            for _ in range(len(self.loader)):
                x, y = next(self.loader)
                loss = nn.functional.mse_loss(self.model(x.cuda()), y.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self._save_checkpoint(epoch)

    @leader_only
    def _save_checkpoint(self, epoch):
        torch.save({"model": self.model.module.state_dict(), "epoch": epoch}, f"checkpoint_{epoch}.pth")


def main():
    local_rank = setup()
    data = TensorDataset(torch.randn(4096, 8), torch.randn(4096, 1))
    loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data, shuffle=True))
    model = DistributedDataParallel(nn.Linear(8, 1).cuda(local_rank), device_ids=[local_rank])
    Runner(model, EpochLoader(loader)).train(epochs=10)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
