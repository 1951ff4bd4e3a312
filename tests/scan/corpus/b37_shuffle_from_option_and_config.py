# expect: shuffle-with-sampler
# shuffle=True spelled through an unchanged --shuffle option default and a config dict key, next to a DistributedSampler.
import argparse
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--shuffle", type=bool, default=True)
args = parser.parse_args()
cfg = {"shuffle": True, "bs": 8}
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
ds = TensorDataset(torch.randn(64, 4))
sampler = DistributedSampler(ds)
a = DataLoader(ds, batch_size=8, sampler=sampler, shuffle=args.shuffle)
b = DataLoader(ds, batch_size=cfg["bs"], sampler=sampler, shuffle=cfg["shuffle"])
model = DDP(nn.Linear(4, 4).cuda(), device_ids=[local_rank])
for epoch in range(2):
    sampler.set_epoch(epoch)
dist.destroy_process_group()
