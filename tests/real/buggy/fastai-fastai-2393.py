# expect: no-barrier-before-checkpoint-load
# source: https://github.com/fastai/fastai/pull/2393
# reason: In distributed mode other processes could torch.load the best model before the master had finished writing it; the merged fix inserts a barrier before every load.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Learner:
    def __init__(self, model, data, path, local_rank):
        self.device = torch.device("cuda", local_rank)
        self.model = DistributedDataParallel(model.to(self.device), device_ids=[local_rank])
        self.sampler = DistributedSampler(data)
        self.dl = DataLoader(data, batch_size=8, sampler=self.sampler)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.path = path

    def save(self, name):
        if dist.get_rank() == 0:
            torch.save(self.model.module.state_dict(), os.path.join(self.path, f"{name}.pth"))

    def load(self, name):
        state = torch.load(os.path.join(self.path, f"{name}.pth"), map_location=self.device)
        self.model.module.load_state_dict(state)

    def fit(self, epochs):
        best = float("inf")
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.dl:
                loss = nn.functional.cross_entropy(self.model(x.to(self.device)), y.to(self.device))
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            if loss.item() < best:
                best = loss.item()
                self.save("bestmodel")
        self.load("bestmodel")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(700, 3, 32, 32), torch.randint(0, 32, (700, 32, 32)))
    seg = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1))
    Learner(seg, data, "models", local_rank).fit(10)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
