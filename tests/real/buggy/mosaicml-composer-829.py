# expect: checkpoint-without-module
# source: https://github.com/mosaicml/composer/pull/829
# reason: The trainer serialised the state dict of the DDP-wrapped model, so every checkpoint key carried the `module.` prefix and the original model could not load it directly; the merged fix saves the unwrapped model's state.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class State:
    def __init__(self, model, optimizer, epoch=0):
        self.model = model
        self.optimizer = optimizer
        self.epoch = epoch

    def state_dict(self):
        return {
            "model": self.model.state_dict(),
            "optimizers": self.optimizer.state_dict(),
            "epoch": self.epoch,
        }


class Trainer:
    def __init__(self, model, save_folder):
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        wrapped = DDP(model.cuda(), device_ids=[local_rank])
        self.state = State(wrapped, torch.optim.Adam(wrapped.parameters()))
        self.save_folder = save_folder

    def fit(self, epochs, batches):
        for epoch in range(epochs):
            for x, y in batches:
                loss = nn.functional.cross_entropy(self.state.model(x.cuda()), y.cuda())
                self.state.optimizer.zero_grad()
                loss.backward()
                self.state.optimizer.step()
            self.state.epoch = epoch
            if dist.get_rank() == 0:
                torch.save(self.state.state_dict(), os.path.join(self.save_folder, f"ep{epoch}.pt"))


if __name__ == "__main__":
    Trainer(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)), "ckpt").fit(
        3, [(torch.randn(16, 32), torch.randint(0, 4, (16,))) for _ in range(100)])
