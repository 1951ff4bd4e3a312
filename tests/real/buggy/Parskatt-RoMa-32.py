# expect: missing-distributed-sampler
# source: https://github.com/Parskatt/RoMa/issues/32
# reason: The DDP training loader drew its batches from a WeightedRandomSampler over the whole scene collection, so every replica saw the entire dataset; the author confirmed a distributed sampler should have been used.
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import ConcatDataset, DataLoader, TensorDataset, WeightedRandomSampler


def build_scenes(n_scenes=12, pairs_per_scene=(200, 2000)):
    rng = np.random.default_rng(0)
    scenes = []
    for _ in range(n_scenes):
        n = int(rng.integers(*pairs_per_scene))
        scenes.append(TensorDataset(torch.randn(n, 6, 64, 64), torch.randn(n, 2, 64, 64)))
    return scenes


def scene_balanced_weights(scenes, alpha=0.75):
    ws = []
    for scene in scenes:
        ws.append(torch.full((len(scene),), len(scene) ** (alpha - 1.0)))
    return torch.cat(ws)


class Matcher(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(6, 64, 3, padding=1), nn.GELU(), nn.Conv2d(64, 64, 3, padding=1))
        self.flow_head = nn.Conv2d(64, 2, 1)

    def forward(self, pair):
        return self.flow_head(self.encoder(pair).relu())


def train(model, optimizer, loader, device, n_steps, rank):
    step = 0
    while step < n_steps:
        for pair, flow in loader:
            loss = (model(pair.to(device)) - flow.to(device)).abs().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if rank == 0 and step % 100 == 0:
                print(f"step {step}: {loss.item():.4f}")
            if step == n_steps:
                break


def main(batch_size=8, n_steps=250_000, steps_per_refresh=20_000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", local_rank)
    model = DDP(Matcher().to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scenes = build_scenes()
    mega = ConcatDataset(scenes)
    ws = scene_balanced_weights(scenes)
    for _ in range(0, n_steps, steps_per_refresh):
        n_samples = min(steps_per_refresh * batch_size, len(mega))
        sampler = WeightedRandomSampler(ws, replacement=False, num_samples=n_samples)
        loader = DataLoader(mega, batch_size=batch_size, sampler=sampler, num_workers=8)
        train(model, optimizer, loader, device, steps_per_refresh, rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
