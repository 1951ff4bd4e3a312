# expect: unused-parameters-error
# source: https://github.com/pytorch/pytorch/issues/43259
# reason: "Expected to have finished reduction in the prior iteration": the model built an FPN with five output levels but forward used only four, so the fifth level's parameters never received gradients; using every level (or find_unused_parameters=True) fixed it.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class FeaturePyramid(nn.Module):
    def __init__(self, channels=(64, 128, 256, 512, 1024), out=256):
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, out, 1) for c in channels)

    def forward(self, feats):
        return [conv(f) for conv, f in zip(self.lateral, feats)]


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList(
            nn.Conv2d(cin, cout, 3, stride=2, padding=1)
            for cin, cout in [(3, 64), (64, 128), (128, 256), (256, 512), (512, 1024)]
        )
        self.fpn = FeaturePyramid()
        self.cls = nn.Conv2d(256, 20, 3, padding=1)

    def forward(self, x):
        feats = []
        for stage in self.stages[:4]:
            x = stage(x)
            feats.append(x)
        levels = self.fpn(feats)
        return sum(self.cls(level).mean() for level in levels)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(Detector().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(100):
        loss = model(torch.randn(2, 3, 256, 256, device="cuda"))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
