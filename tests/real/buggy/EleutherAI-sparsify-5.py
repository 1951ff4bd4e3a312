# expect: collective-mismatch
# source: https://github.com/EleutherAI/sparsify/pull/5
# reason: save() returned early on every rank but 0, so only rank 0 reached the dist.barrier() at its end and the run stalled after the first save (a desync under TORCH_DISTRIBUTED_DEBUG=DETAIL); the merged fix lets every rank reach the barrier.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Autoencoders(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.layers = nn.ModuleDict({f"layer{i}": nn.Linear(width, width * 8) for i in range(4)})

    def forward(self, hidden):
        return {name: coder(hidden) for name, coder in self.layers.items()}


class AutoencoderTrainer:
    def __init__(self, width=512, save_every=1000, out_dir="checkpoints"):
        self.rank = dist.get_rank() if dist.is_initialized() else 0
        self.device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        self.coders = Autoencoders(width).to(self.device)
        self.ddp = DDP(self.coders, device_ids=[self.device.index])
        self.opt = torch.optim.Adam(self.ddp.parameters(), lr=1e-4)
        self.save_every = save_every
        self.out_dir = out_dir

    def save(self):
        if self.rank != 0:
            return
        os.makedirs(self.out_dir, exist_ok=True)
        for name, coder in self.coders.layers.items():
            torch.save(coder.state_dict(), os.path.join(self.out_dir, f"{name}.pt"))
        dist.barrier()

    def fit(self, batches):
        for step, hidden in enumerate(batches):
            hidden = hidden.to(self.device)
            loss = sum(out.pow(2).mean() for out in self.ddp(hidden).values())
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            if (step + 1) % self.save_every == 0:
                self.save()
            dist.all_reduce(loss.detach())


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    trainer = AutoencoderTrainer()
    trainer.fit(torch.randn(4000, 16, 512).unbind(0))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
