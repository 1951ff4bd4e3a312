# expect: grad-accum-without-no-sync
# source: https://github.com/goodfire-ai/spd/issues/215
# reason: The maintainers' own issue: the DDP optimisation loop accumulated gradients over several micro-batches but let DDP all-reduce after every backward instead of wrapping the non-final ones in model.no_sync().
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


@dataclass
class Config:
    steps: int = 20_000
    batch_size: int = 64
    gradient_accumulation_steps: int = 4
    lr: float = 3e-4
    n_components: int = 512
    d_model: int = 256
    importance_coeff: float = 1e-3


class ComponentModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.U = nn.Parameter(torch.randn(cfg.d_model, cfg.n_components) * 0.02)
        self.V = nn.Parameter(torch.randn(cfg.n_components, cfg.d_model) * 0.02)
        self.gate = nn.Linear(cfg.d_model, cfg.n_components)

    def forward(self, x):
        mask = torch.sigmoid(self.gate(x))
        return ((x @ self.U) * mask) @ self.V, mask


def init_distributed():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return local_rank


def loop_forever(loader, sampler):
    epoch = 0
    while True:
        sampler.set_epoch(epoch)
        yield from loader
        epoch += 1


def optimize(cfg, local_rank):
    device = torch.device("cuda", local_rank)
    target = nn.Linear(cfg.d_model, cfg.d_model, bias=False).to(device).requires_grad_(False)
    model = DistributedDataParallel(ComponentModel(cfg).to(device), device_ids=[local_rank])
    data = TensorDataset(torch.randn(200_000, cfg.d_model))
    sampler = DistributedSampler(data)
    batches = loop_forever(DataLoader(data, batch_size=cfg.batch_size, sampler=sampler, drop_last=True), sampler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    for step in range(cfg.steps):
        optimizer.zero_grad(set_to_none=True)
        for _ in range(cfg.gradient_accumulation_steps):
            (x,) = next(batches)
            x = x.to(device)
            out, mask = model(x)
            recon = (out - target(x)).pow(2).mean()
            loss = (recon + cfg.importance_coeff * mask.abs().mean()) / cfg.gradient_accumulation_steps
            loss.backward()
        optimizer.step()
        if dist.get_rank() == 0 and step % 500 == 0:
            print(f"step {step} loss {loss.item() * cfg.gradient_accumulation_steps:.5f}")


def main():
    local_rank = init_distributed()
    optimize(Config(), local_rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
