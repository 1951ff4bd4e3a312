# expect: collective-mismatch
# source: https://github.com/bo-ke/llm-internal-medicine/pull/45
# reason: gather_and_aggregate returned early on ranks with no local metrics and skipped its all_gather_object, so every other rank blocked in the collective; the merged fix removes the early return.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def gather_and_aggregate(local_metrics):
    if not local_metrics:
        return {}
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, local_metrics)
    merged = {}
    for part in gathered:
        for key, value in (part or {}).items():
            merged.setdefault(key, []).append(value)
    return {k: sum(v) / len(v) for k, v in merged.items()}


def main(steps=2000, monitor_every=50):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    rank = dist.get_rank()
    model = DDP(nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 512)).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    monitored = {"layer0"} if rank % 2 == 0 else set()  # some ranks hold no monitored layer
    for step in range(steps):
        x = torch.randn(16, 512, device=device)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % monitor_every == 0:
            local = {name: loss.item() for name in monitored}
            stats = gather_and_aggregate(local)
            if rank == 0:
                print(step, stats)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
