# expect: missing-set-device
# source: https://github.com/NVIDIA/apex/issues/222
# reason: The reporter found their processes used ~1 GB each on GPU 0 because they loaded parameters before setting the current device; the maintainer lists forgetting set_device first.
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
parser.add_argument("--init", default="pretrained.pt")
args = parser.parse_args()

dist.init_process_group(backend="nccl", init_method="env://")

model = nn.Sequential(nn.Conv2d(3, 32, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))
state = torch.load(args.init)
model.load_state_dict(state)
model = model.cuda(args.local_rank)
model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank)

dataset = TensorDataset(torch.randn(5000, 3, 32, 32), torch.randint(0, 10, (5000,)))
sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, batch_size=64, sampler=sampler)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(5):
    sampler.set_epoch(epoch)
    for images, labels in loader:
        images, labels = images.cuda(args.local_rank), labels.cuda(args.local_rank)
        loss = nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

dist.destroy_process_group()
