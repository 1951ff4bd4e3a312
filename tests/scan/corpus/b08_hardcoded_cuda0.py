# expect: hardcoded-cuda0
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda:0")
    model = torch.nn.Linear(10, 10).to(device)
    model = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(100):
        x = torch.randn(8, 10, device=device)
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


main()
