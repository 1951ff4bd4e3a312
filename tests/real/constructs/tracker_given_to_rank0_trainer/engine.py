import os

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Engine:
    def __init__(self, events=None, ckpt_prefix=None, local_rank=0, save_every=100):
        torch.cuda.set_device(local_rank)
        self.net = DDP(nn.Linear(16, 4).cuda(), device_ids=[local_rank])
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=1e-3)
        self.events = events
        self.ckpt_prefix = ckpt_prefix
        self.save_every = save_every

    def save_weights(self, step):
        if self.ckpt_prefix is None:
            return
        os.makedirs(os.path.dirname(self.ckpt_prefix), exist_ok=True)
        torch.save(self.net.module.state_dict(), f"{self.ckpt_prefix}_{step}.pth")

    def fit(self, steps):
        for step in range(1, steps + 1):
            x = torch.randn(32, 16, device="cuda")
            loss = self.net(x).pow(2).mean()
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            if self.events is not None:
                self.events.add_scalar("loss", loss.item(), step)
                if step % self.save_every == 0:
                    self.save_weights(step)
                    torch.save(self.opt.state_dict(), f"{self.ckpt_prefix}_opt.pth")
