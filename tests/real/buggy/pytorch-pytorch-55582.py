# expect: unused-parameters-error
# source: https://github.com/pytorch/pytorch/issues/55582
# reason: The model has one fully-connected output layer per label group and each batch only runs the layers of the groups present in it (all of them over an epoch); under DistributedDataParallel without find_unused_parameters the layers a batch skipped got no gradient and the next iteration raised 'Expected to have finished reduction in the prior iteration' (DataParallel was fine).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

GROUP_SIZES = [12, 40, 7, 96, 25]


class GroupedClassifier(nn.Module):
    def __init__(self, in_dim=1024, hidden=512):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.fcs = nn.ModuleList(nn.Linear(hidden, n) for n in GROUP_SIZES)

    def forward(self, x, group_ids):
        feat = self.trunk(x)
        logits = {}
        for g in torch.unique(group_ids).tolist():
            logits[g] = self.fcs[g](feat[group_ids == g])
        return logits


def setup():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = rank % torch.cuda.device_count()
    torch.cuda.set_device(device)
    return device


def main():
    device = setup()
    model = DistributedDataParallel(GroupedClassifier().cuda(device), device_ids=[device])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    n = 20000
    groups = torch.randint(0, len(GROUP_SIZES), (n,))
    labels = torch.tensor([torch.randint(0, GROUP_SIZES[g], ()).item() for g in groups.tolist()])
    dataset = TensorDataset(torch.randn(n, 1024), groups, labels)
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    for epoch in range(30):
        sampler.set_epoch(epoch)
        for x, g, y in loader:
            x, g, y = x.cuda(device), g.cuda(device), y.cuda(device)
            logits = model(x, g)
            loss = sum(F.cross_entropy(out, y[g == k]) for k, out in logits.items())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
