# expect: mixed-sync-async-collectives
# source: https://github.com/NERSC/sc24-dl-tutorial/pull/1
# reason: The reviewer found the async all-reduce's future is marked done when the reduction is enqueued, so the gradient copy could run too early and corrupt data; he asks for a blocking all-reduce.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors


def allreduce_grads(model, dp_size):
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    if not grads:
        return
    coalesced = _flatten_dense_tensors(grads)
    coalesced.div_(dp_size)
    dist.all_reduce(coalesced, op=dist.ReduceOp.SUM, async_op=True)
    for buf, synced in zip(grads, _unflatten_dense_tensors(coalesced, grads)):
        buf.copy_(synced)


def main(steps=5000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(steps):
        x = torch.randn(32, 1024, device=device)
        loss = nn.functional.mse_loss(model(x), x)
        optimizer.zero_grad()
        loss.backward()
        allreduce_grads(model, dist.get_world_size())
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
