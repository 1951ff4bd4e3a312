# expect: no-barrier-before-checkpoint-load
# source: https://github.com/KempnerInstitute/KempnerForge/pull/50
# reason: save() returned on the non-zero ranks before rank 0 had committed the checkpoint, so readers raced its writes (flaky on NFS/Lustre); the merged fix ends save() with a barrier.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class CheckpointManager:
    def __init__(self, directory):
        self.directory = directory

    def save(self, model, optimizer, step):
        if dist.get_rank() == 0:
            path = os.path.join(self.directory, f"step_{step}")
            os.makedirs(path, exist_ok=True)
            torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "step": step},
                       os.path.join(path, "train_state.pt"))
            latest = os.path.join(self.directory, "latest")
            if os.path.islink(latest):
                os.remove(latest)
            os.symlink(path, latest)

    def load(self, model, optimizer, device):
        state = torch.load(os.path.join(self.directory, "latest", "train_state.pt"), map_location=device)
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        return state["step"]


def main(total_steps=2000, ckpt_every=500):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = DDP(nn.Linear(1024, 1024).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    manager = CheckpointManager("checkpoints")
    for step in range(total_steps):
        x = torch.randn(32, 1024, device=device)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % ckpt_every == 0:
            manager.save(model, optimizer, step)
            resumed = manager.load(model, optimizer, device)
            assert resumed == step
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
