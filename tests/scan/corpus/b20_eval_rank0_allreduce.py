# expect: collective-mismatch
# Validation runs on rank 0 only, but evaluate() all-reduces its metric: ranks 1..N-1 never join.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def evaluate(model):
    correct = torch.zeros(1, device="cuda")
    with torch.no_grad():
        for _ in range(10):
            correct += (model.module(torch.randn(4, 8, device="cuda")).argmax(1) == 0).sum()
    dist.all_reduce(correct)
    return correct.item()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(5):
        loss = model(torch.randn(16, 8, device="cuda")).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if dist.get_rank() == 0:
            acc = evaluate(model)
            print(f"epoch {epoch}: {acc}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
