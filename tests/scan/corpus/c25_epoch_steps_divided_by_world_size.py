# expect: none
# The same loop with the world size in the step count: each rank runs its share of the epoch.
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
world_size = dist.get_world_size()
model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
epoch_size, batch_size = 100000, 256
for epoch in range(3):
    for _ in range(epoch_size // (batch_size * world_size)):
        loss = model(torch.randn(batch_size, 8).cuda()).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
dist.destroy_process_group()
