# expect: missing-set-epoch
# source: https://github.com/Snowdar/asv-subtools/issues/8
# reason: The maintainer confirmed the trainer must call data.train_sampler.set_epoch(this_epoch) at the start of every epoch and said they would fix it.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Bunch:
    """Loaders and the sampler of the training data, built once."""

    def __init__(self, dataset, batch_size, use_ddp):
        self.train_sampler = DistributedSampler(dataset) if use_ddp else None
        self.train_loader = DataLoader(dataset, batch_size=batch_size, shuffle=self.train_sampler is None,
                                       sampler=self.train_sampler, num_workers=2, drop_last=True)


class SimpleTrainer:
    def __init__(self, model, data, epochs, device):
        self.model, self.data, self.epochs, self.device = model, data, epochs, device
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def run(self):
        for this_epoch in range(self.epochs):
            self.model.train()
            for feats, targets in self.data.train_loader:
                feats, targets = feats.to(self.device), targets.to(self.device)
                loss = nn.functional.cross_entropy(self.model(feats), targets)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    data = Bunch(TensorDataset(torch.randn(6000, 200, 30), torch.randint(0, 1000, (6000,))), 128, use_ddp=True)
    model = nn.Sequential(nn.Flatten(), nn.Linear(200 * 30, 512), nn.ReLU(), nn.Linear(512, 1000)).to(device)
    model = DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)
    SimpleTrainer(model, data, epochs=21, device=device).run()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
