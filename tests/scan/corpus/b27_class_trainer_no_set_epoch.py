# expect: missing-set-epoch
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, epochs: int = 4):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.epochs = epochs
        ds = TensorDataset(torch.randn(512, 12), torch.randint(0, 3, (512,)))
        self.sampler = DistributedSampler(ds)
        self.loader = DataLoader(ds, batch_size=32, sampler=self.sampler)
        self.model = DDP(torch.nn.Linear(12, 3).cuda(), device_ids=[self.local_rank])
        self.opt = torch.optim.Adam(self.model.parameters())

    def fit(self):
        for epoch in range(self.epochs):
            for x, y in self.loader:
                loss = torch.nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()

    def close(self):
        dist.destroy_process_group()


if __name__ == "__main__":
    trainer = Trainer()
    trainer.fit()
    trainer.close()
