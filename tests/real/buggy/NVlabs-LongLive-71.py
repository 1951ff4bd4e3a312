# expect: unsynced-dropout-rng
# source: https://github.com/NVlabs/LongLive/issues/71
# reason: Each rank builds its DistributedSampler with its own seed (derived from the clock and the global rank), but DistributedSampler needs the same seed on every replica so that the rank slices partition one shared permutation; with different seeds samples overlap between ranks and others are skipped. The maintainers fixed it by passing the shared, broadcast config seed.
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class PromptSet(Dataset):
    def __init__(self, n=10000):
        self.prompts = torch.randn(n, 256)

    def __len__(self):
        return len(self.prompts)

    def __getitem__(self, i):
        return self.prompts[i]


class DiffusionTrainer:
    def __init__(self, config):
        self.config = config
        dist.init_process_group("nccl")
        self.global_rank = dist.get_rank()
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        torch.manual_seed(config["seed"])
        generator = nn.Sequential(nn.Linear(256, 1024), nn.SiLU(), nn.Linear(1024, 256)).cuda()
        self.model = nn.parallel.DistributedDataParallel(generator, device_ids=[self.local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=config["lr"])
        dataset = PromptSet()
        sampler_seed = int(time.time()) * self.global_rank
        self.sampler = DistributedSampler(dataset, shuffle=True, drop_last=True, seed=sampler_seed)
        self.loader = DataLoader(dataset, batch_size=config["batch_size"], sampler=self.sampler, num_workers=4)

    def train(self):
        step = 0
        for epoch in range(self.config["epochs"]):
            self.sampler.set_epoch(epoch)
            for prompts in self.loader:
                noise = torch.randn_like(prompts).cuda()
                loss = nn.functional.mse_loss(self.model(prompts.cuda() + noise), noise)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                step += 1


if __name__ == "__main__":
    DiffusionTrainer({"seed": 0, "lr": 1e-4, "batch_size": 8, "epochs": 2}).train()
