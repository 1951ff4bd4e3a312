# expect: uneven-last-batch
# source: https://github.com/lifeiteng/vall-e/pull/93
# reason: With duration-packed batches each rank got a different number of batches; the rank that ran out first went on to the validation all-reduce while the others were still training, and the job hung. The merged fix makes all ranks stop together.
import os
import random

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class DurationBatchSampler:
    """Packs this rank's share of the utterances into batches of at most ``max_duration`` seconds."""

    def __init__(self, durations, max_duration, rank, world_size, seed=42):
        self.indices = list(range(len(durations)))[rank::world_size]
        self.durations = durations
        self.max_duration = max_duration
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        order = self.indices[:]
        random.Random(self.seed + self.epoch).shuffle(order)
        batch, total = [], 0.0
        for i in order:
            if batch and total + self.durations[i] > self.max_duration:
                yield batch
                batch, total = [], 0.0
            batch.append(i)
            total += self.durations[i]
        if batch:
            yield batch


class MetricsTracker(dict):
    def reduce(self, device):
        keys = sorted(self)
        t = torch.tensor([self[k] for k in keys], device=device)
        dist.all_reduce(t)
        for k, v in zip(keys, t.tolist()):
            self[k] = v


def compute_validation_loss(model, feats, device):
    model.eval()
    tot = MetricsTracker()
    with torch.no_grad():
        out = model(feats.to(device))
        tot["loss"] = out.pow(2).mean().item()
        tot["frames"] = float(feats.shape[0])
    tot.reduce(device)
    model.train()
    return tot["loss"] / dist.get_world_size()


def train_one_epoch(model, optimizer, feats, sampler, device, valid_feats, valid_interval=200):
    for batch_idx, batch in enumerate(sampler):
        x = feats[batch].to(device)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if batch_idx % valid_interval == 0:
            valid_loss = compute_validation_loss(model, valid_feats, device)
            if dist.get_rank() == 0:
                print(f"batch {batch_idx}: train {loss.item():.4f} valid {valid_loss:.4f}")


def main(num_epochs=20):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    gen = torch.Generator().manual_seed(0)
    durations = (torch.rand(20000, generator=gen) * 18 + 1).tolist()
    feats = torch.randn(20000, 80)
    valid_feats = torch.randn(256, 80)
    sampler = DurationBatchSampler(durations, max_duration=120.0, rank=dist.get_rank(),
                                   world_size=dist.get_world_size())
    model = DDP(nn.Sequential(nn.Linear(80, 512), nn.ReLU(), nn.Linear(512, 80)).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for epoch in range(num_epochs):
        sampler.set_epoch(epoch)
        train_one_epoch(model, optimizer, feats, sampler, device, valid_feats)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
