# expect:
# seen-in: https://github.com/pytorch/examples/blob/77f55b912142e11fcfdf5b530231fb9c52f181e8/distributed/ddp-tutorial-series/multigpu_torchrun.py
# A trainer class keeps gpu_id = LOCAL_RANK and guards printing and saving with "if self.gpu_id == 0".
import os

import torch
import torch.nn as nn
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Trainer:
    def __init__(self, model, loader, optimizer):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = DDP(model.to(self.gpu_id), device_ids=[self.gpu_id])
        self.loader = loader
        self.optimizer = optimizer

    def _run_epoch(self, epoch):
        self.loader.sampler.set_epoch(epoch)
        for source, targets in self.loader:
            source, targets = source.to(self.gpu_id), targets.to(self.gpu_id)
            self.optimizer.zero_grad()
            loss = nn.functional.cross_entropy(self.model(source), targets)
            loss.backward()
            self.optimizer.step()
        if self.gpu_id == 0:
            print(f"[GPU{self.gpu_id}] Epoch {epoch} | last loss {loss.item():.3f}")

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)
            if self.gpu_id == 0:
                torch.save(self.model.module.state_dict(), "checkpoint.pt")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    init_process_group(backend="nccl")
    data = TensorDataset(torch.randn(2048, 20), torch.randint(0, 2, (2048,)))
    loader = DataLoader(data, batch_size=32, shuffle=False, sampler=DistributedSampler(data))
    model = nn.Linear(20, 2)
    Trainer(model, loader, torch.optim.SGD(model.parameters(), lr=1e-3)).train(10)
    destroy_process_group()


if __name__ == "__main__":
    main()
