# expect:
# seen-in: https://github.com/cvg/glue-factory/blob/2d17e3b3bd7d30f0c828d4c4d3eac4ecefbf283d/gluefactory/train.py
# The model is built already on its GPU through a registry factory, then converted to SyncBatchNorm right before the
# wrap: the conversion keeps the device of the module it converts.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Matcher(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.layers = nn.Sequential(nn.Conv1d(width, width, 1), nn.BatchNorm1d(width), nn.ReLU(),
                                    nn.Conv1d(width, 1, 1))

    def forward(self, x):
        return self.layers(x)


REGISTRY = {"matcher": Matcher}


def get_model(name):
    return REGISTRY[name]


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = local_rank
    model = get_model("matcher")(16).to(device)
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DDP(model, device_ids=[device])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for step in range(100):
        x = torch.randn(8, 16, 32, device=device)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
