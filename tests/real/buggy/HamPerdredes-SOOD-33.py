# expect: unused-parameters-error
# source: https://github.com/HamPerdredes/SOOD/issues/33
# reason: DDP raised "Expected to have finished reduction ... parameters that were not used in producing loss"; the maintainer's advice to set find_unused_parameters=True resolved it.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class SemiDetector(nn.Module):
    def __init__(self, use_global_consistency=False):
        super().__init__()
        self.use_global_consistency = use_global_consistency
        self.encoder = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(8), nn.Flatten())
        self.cls = nn.Linear(32 * 64, 15)
        self.box = nn.Linear(32 * 64, 5)
        self.global_proj = nn.Linear(32 * 64, 128)

    def forward(self, x):
        f = self.encoder(x)
        out = {"cls": self.cls(f), "box": self.box(f)}
        if self.use_global_consistency:
            out["proj"] = self.global_proj(f)
        return out


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = DDP(SemiDetector().to(device), device_ids=[local_rank])
    data = TensorDataset(torch.randn(4000, 3, 128, 128), torch.randint(0, 15, (4000,)), torch.randn(4000, 5))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0025, momentum=0.9)
    for epoch in range(12):
        sampler.set_epoch(epoch)
        for img, label, box in loader:
            out = model(img.to(device))
            loss = nn.functional.cross_entropy(out["cls"], label.to(device)) + nn.functional.l1_loss(out["box"], box.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
