# expect: none
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
device = torch.device("cuda", local_rank)
dist.init_process_group("nccl")
weights = torch.tensor([0.2, 0.8])
criterion = nn.CrossEntropyLoss(weight=weights).to(device)
pos = torch.ones(3, device=device)
bce = nn.BCEWithLogitsLoss(pos_weight=pos)
model = DDP(nn.Linear(5, 2).to(device), device_ids=[local_rank])
out = model(torch.randn(4, 5, device=device))
loss = criterion(out, torch.zeros(4, dtype=torch.long, device=device))
loss.backward()
dist.destroy_process_group()
