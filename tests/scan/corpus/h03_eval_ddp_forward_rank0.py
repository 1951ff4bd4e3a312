# expect: collective-mismatch
# todo-miss: collective-mismatch
# Harder: rank 0 alone runs the DDP wrapper's forward (buffers are broadcast: a collective) on a BN model.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("gloo")
    net = nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4))
    model = DDP(net)
    model(torch.randn(2, 4)).sum().backward()
    if dist.get_rank() == 0:
        with torch.no_grad():
            print(model(torch.randn(2, 4)))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
