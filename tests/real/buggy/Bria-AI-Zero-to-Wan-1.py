# expect: collective-mismatch
# source: https://github.com/Bria-AI/Zero-to-Wan/pull/1
# reason: The FSDP video-diffusion trainer saved checkpoints through a helper that gathers the full state dict and the optimizer state (collectives over every shard), but called it only `if ... and master_process`, so rank 0 waited in the gather for ranks that never entered it and the multi-GPU run hung at the first checkpoint step; the merged fix removes the master_process condition so every rank enters the gather (rank0_only keeps the writing on rank 0).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import FullStateDictConfig, FullOptimStateDictConfig, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


class TinyDenoiser(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, width * 2), nn.SiLU(), nn.Linear(width * 2, width))

    def forward(self, noisy):
        return self.body(noisy)


def write_checkpoint(model, optimizer, step, out_dir, rank):
    policy = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    optim_policy = FullOptimStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, policy, optim_policy):
        weights = model.state_dict()
        optim_state = FSDP.optim_state_dict(model, optimizer)
    if rank == 0:
        target = os.path.join(out_dir, f"step_{step:07d}")
        os.makedirs(target, exist_ok=True)
        torch.save(weights, os.path.join(target, "model.pt"))
        torch.save(optim_state, os.path.join(target, "optimizer.pt"))


def run(max_steps=200, save_every=50, out_dir="checkpoints"):
    dist.init_process_group(backend="nccl")
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    is_master = rank == 0

    torch.manual_seed(0)
    model = FSDP(TinyDenoiser().cuda(), device_id=local_rank)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    for step in range(max_steps):
        clean = torch.randn(8, 64, device="cuda")
        noisy = clean + 0.1 * torch.randn_like(clean)
        loss = nn.functional.mse_loss(model(noisy), clean)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if is_master and step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")
        if step > 0 and step % save_every == 0 and is_master:
            write_checkpoint(model, optimizer, step, out_dir, rank)

    dist.destroy_process_group()


if __name__ == "__main__":
    run()
