# expect: loss-not-on-device
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")

class_weights = torch.tensor([0.2, 0.3, 0.5])
criterion = nn.CrossEntropyLoss(weight=class_weights)

data = TensorDataset(torch.randn(300, 8), torch.randint(0, 3, (300,)))
sampler = DistributedSampler(data)
loader = DataLoader(data, batch_size=10, sampler=sampler)
model = DDP(nn.Linear(8, 3).cuda(), device_ids=[local_rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(4):
    sampler.set_epoch(epoch)
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()

dist.destroy_process_group()
