# expect: mixed-sync-async-collectives
# source: https://github.com/OpenNMT/OpenNMT-py/issues/2295
# reason: all_reduce was launched with async_op=True and the buffer divided right away without waiting; a maintainer reproduced the multi-GPU discrepancy and confirmed the suggested fix.
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def all_reduce_and_rescale_tensors(tensors, rescale_denom, buffer_size=10485760):
    buffer_t = tensors[0].new(max(buffer_size, sum(t.numel() for t in tensors))).zero_()
    offset = 0
    for t in tensors:
        numel = t.numel()
        buffer_t[offset:offset + numel].copy_(t.view(-1))
        offset += numel
    torch.distributed.all_reduce(buffer_t[:offset], async_op=True)
    buffer_t.div_(rescale_denom)
    offset = 0
    for t in tensors:
        numel = t.numel()
        t.view(-1).copy_(buffer_t[offset:offset + numel])
        offset += numel


def main(steps=20000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    torch.manual_seed(1234)
    model = nn.Sequential(nn.Embedding(32000, 512), nn.Linear(512, 32000)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
    for step in range(steps):
        src = torch.randint(0, 32000, (64, 32), device=device)
        loss = nn.functional.cross_entropy(model(src).flatten(0, 1), src.flatten())
        optimizer.zero_grad()
        loss.backward()
        grads = [p.grad.data for p in model.parameters() if p.grad is not None]
        all_reduce_and_rescale_tensors(grads, float(dist.get_world_size()))
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
