# expect: ddp-before-to-device
# source: https://github.com/pytorch/pytorch/issues/14187
# reason: "Only CUDA dense tensor is supported for NCCL collective operations" came from wrapping a CPU module in DDP; the maintainer's answer is to put the network on the GPU first.
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", metavar="int", type=int, dest="rank", default=0)
args = parser.parse_args()

torch.cuda.set_device(args.rank)
torch.distributed.init_process_group(backend="nccl")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(10, 10)

    def forward(self, data):
        return self.l(data)


net = nn.parallel.DistributedDataParallel(Net(), device_ids=[args.rank], output_device=args.rank)
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
for step in range(100):
    x = torch.randn(32, 10).cuda(args.rank)
    loss = net(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
torch.distributed.destroy_process_group()
