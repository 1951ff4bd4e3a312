# expect: missing-distributed-sampler
# A flat torchrun script: the training loader has no DistributedSampler.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")

dataset = TensorDataset(torch.randn(1024, 32), torch.randint(0, 4, (1024,)))
loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=2)

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).cuda(local_rank)
model = DDP(model, device_ids=[local_rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(3):
    for x, y in loader:
        x, y = x.cuda(local_rank), y.cuda(local_rank)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    if dist.get_rank() == 0:
        print(f"epoch {epoch} loss {loss.item():.3f}")

dist.destroy_process_group()
