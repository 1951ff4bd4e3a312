"""The training loop: wraps the model in DDP and logs on rank 0 only."""
import torch
import torch.distributed as dist
from torch.nn.parallel.distributed import DistributedDataParallel as DDP

import dist_util


class TrainLoop:
    def __init__(self, *, model, loader, sampler, lr):
        self.model = model
        self.loader = loader
        self.sampler = sampler
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.ddp_model = DDP(self.model, device_ids=[dist_util.dev()], output_device=dist_util.dev(),
                             broadcast_buffers=False, bucket_cap_mb=128)

    def run_loop(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for step, (batch,) in enumerate(self.loader):
                batch = batch.to(dist_util.dev())
                noise = torch.randn_like(batch)
                loss = (self.ddp_model(batch + noise) - noise).pow(2).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                if dist.get_rank() == 0 and step % 100 == 0:
                    print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
            if dist.get_rank() == 0:
                torch.save(self.model.state_dict(), f"model{epoch:06d}.pt")
