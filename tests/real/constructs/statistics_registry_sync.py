# expect:
# seen-in: https://github.com/NVlabs/stylegan3/blob/c233a919a6faee6e36a316ddd4eddababad1adf9/train.py
# A statistics module keeps a process-wide registry of named counters; its sync returns early when no name is
# registered, before the all_reduce. Every rank registers the same names (rank 0 alone gives values, the others
# register the name with nothing), so every rank reaches the all_reduce.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

_totals = dict()


def record(name, value):
    total = _totals.setdefault(name, torch.zeros(2, device="cuda"))
    if value is not None:
        total += torch.stack([torch.ones((), device="cuda"), value.detach().float()])


def _reduce(names):
    if len(names) == 0:
        return []
    stacked = torch.stack([_totals[name] for name in names])
    dist.all_reduce(stacked)
    return list(zip(names, stacked.cpu()))


class Summary:
    def __init__(self, prefix=""):
        self.prefix = prefix

    def names(self):
        return [name for name in _totals if name.startswith(self.prefix)]

    def collect(self):
        return {name: (total[1] / total[0].clamp(min=1)).item() for name, total in _reduce(self.names())}


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(4096, 32), torch.randn(4096, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    model = DistributedDataParallel(nn.Linear(32, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    summary = Summary("loss")
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            record("loss/train", loss)
        stats = summary.collect()
        if dist.get_rank() == 0:
            print(epoch, stats)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
