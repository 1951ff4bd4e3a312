# expect: missing-distributed-sampler
# source: https://github.com/coqui-ai/Trainer/pull/3
# reason: When a model supplied its own sampler (here a weighted sampler over speakers), the trainer used it as-is under DDP, so every process drew from the whole dataset; the merged PR wraps such samplers in a distributed sampler wrapper.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler
from torch.utils.data.distributed import DistributedSampler


class TTSModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.GRU(80, 256, batch_first=True)
        self.decoder = nn.Linear(256, 80)

    def forward(self, x):
        out, _ = self.encoder(x)
        return self.decoder(out)

    def get_sampler(self, dataset, speakers):
        counts = torch.bincount(speakers)
        weights = 1.0 / counts[speakers].float()
        return WeightedRandomSampler(weights, len(weights))

    def get_data_loader(self, dataset, speakers, batch_size, num_gpus):
        sampler = self.get_sampler(dataset, speakers)
        if sampler is None and num_gpus > 1:
            sampler = DistributedSampler(dataset)
        return DataLoader(dataset, batch_size=batch_size, sampler=sampler, drop_last=False, num_workers=4)


class Trainer:
    def __init__(self, model, dataset, speakers, batch_size=32, epochs=1000):
        self.num_gpus = int(os.environ.get("WORLD_SIZE", 1))
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        if self.num_gpus > 1:
            torch.cuda.set_device(self.local_rank)
            dist.init_process_group("nccl")
        self.device = torch.device("cuda", self.local_rank)
        self.model = model.to(self.device)
        if self.num_gpus > 1:
            self.model = nn.parallel.DistributedDataParallel(self.model, device_ids=[self.local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        self.train_loader = model.get_data_loader(dataset, speakers, batch_size, self.num_gpus)
        self.epochs = epochs

    def fit(self):
        for epoch in range(self.epochs):
            if hasattr(self.train_loader.sampler, "set_epoch"):
                self.train_loader.sampler.set_epoch(epoch)
            for (mels,) in self.train_loader:
                mels = mels.to(self.device)
                loss = nn.functional.l1_loss(self.model(mels), mels)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


if __name__ == "__main__":
    data = TensorDataset(torch.randn(5000, 100, 80))
    Trainer(TTSModel(), data, torch.randint(0, 10, (5000,))).fit()
