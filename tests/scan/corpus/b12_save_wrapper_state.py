# expect: checkpoint-without-module
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(epochs=2):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net = torch.nn.Linear(32, 2).cuda()
    ddp_net = DDP(net, device_ids=[local_rank])
    opt = torch.optim.SGD(ddp_net.parameters(), lr=0.1)
    for epoch in range(epochs):
        loss = ddp_net(torch.randn(8, 32).cuda()).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if dist.get_rank() == 0:
            state = {"epoch": epoch, "model": ddp_net.state_dict(), "optim": opt.state_dict()}
            torch.save(state, f"ckpt_{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    train()
