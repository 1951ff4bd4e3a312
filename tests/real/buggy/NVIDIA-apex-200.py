# expect: missing-set-device
# source: https://github.com/NVIDIA/apex/issues/200
# reason: GPU 0 used much more memory than the others after amp.initialize: the script never called torch.cuda.set_device(args.local_rank) before building the model, so every process also allocated on GPU 0; the maintainer pointed to set_device before model creation.
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from apex import amp
from apex.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
parser.add_argument("--opt-level", default="O1")
args = parser.parse_args()

dist.init_process_group(backend="nccl", init_method="env://")

model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(64, 1000)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
model = DistributedDataParallel(model)
criterion = nn.CrossEntropyLoss().cuda()

dataset = TensorDataset(torch.randn(2048, 3, 64, 64), torch.randint(0, 1000, (2048,)))
sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, batch_size=32, sampler=sampler, num_workers=4, pin_memory=True)

for epoch in range(90):
    sampler.set_epoch(epoch)
    for images, target in loader:
        images, target = images.cuda(non_blocking=True), target.cuda(non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
