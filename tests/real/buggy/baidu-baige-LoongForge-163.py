# expect: grad-accum-without-no-sync
# source: https://github.com/baidu-baige/LoongForge/pull/163
# reason: no_sync() wrapped only backward(); DDP decides in forward whether to reduce, so gradients were all-reduced on every micro-step. The merged fix wraps forward and backward.
import contextlib
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class VLATrainer:
    def __init__(self, model, loader, sampler, grad_accum, device):
        self.model, self.loader, self.sampler = model, loader, sampler
        self.grad_accum, self.device = grad_accum, device
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def _backward_loss(self, loss, is_last_micro):
        ctx = contextlib.nullcontext() if is_last_micro else self.model.no_sync()
        with ctx:
            (loss / self.grad_accum).backward()

    def train_epoch(self, epoch):
        self.sampler.set_epoch(epoch)
        for micro, (obs, action) in enumerate(self.loader):
            pred = self.model(obs.to(self.device))
            loss = nn.functional.mse_loss(pred, action.to(self.device))
            is_last = (micro + 1) % self.grad_accum == 0
            self._backward_loss(loss, is_last)
            if is_last:
                self.optimizer.step()
                self.optimizer.zero_grad()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    data = TensorDataset(torch.randn(8192, 512), torch.randn(8192, 7))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler, num_workers=4)
    model = DDP(nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 7)).to(device), device_ids=[local_rank])
    trainer = VLATrainer(model, loader, sampler, grad_accum=4, device=device)
    for epoch in range(10):
        trainer.train_epoch(epoch)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
