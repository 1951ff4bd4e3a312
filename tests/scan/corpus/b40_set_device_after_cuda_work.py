# expect: missing-set-device
# set_device(local_rank) is called, but only after a checkpoint was loaded without map_location and the model moved with .cuda(): those land on GPU 0 in every process.
import argparse
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()

model = nn.Linear(8, 8)
model.load_state_dict(torch.load("pretrained.pth"))
model = model.cuda()
torch.cuda.set_device(args.local_rank)
dist.init_process_group("nccl")
model = DDP(model, device_ids=[args.local_rank])
dist.destroy_process_group()
