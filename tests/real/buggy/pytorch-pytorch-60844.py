# expect:
# source: https://github.com/pytorch/pytorch/issues/60844
# reason: A multitask model with one output head per task, some heads unused in a given run or batch: the reporters state they need find_unused_parameters=True, so flagging it as unnecessary would be wrong.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class MultiTaskModel(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(300, 256), nn.ReLU())
        self.heads = nn.ModuleDict({name: nn.Linear(256, n_out) for name, n_out in tasks.items()})

    def forward(self, x, task):
        return self.heads[task](self.encoder(x))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    tasks = {"classify": 10, "rank": 1, "tag": 50}
    model = MultiTaskModel(tasks).to(device)
    model = DDP(model, device_ids=[local_rank], find_unused_parameters=True)
    data = TensorDataset(torch.randn(9000, 300), torch.randint(0, 3, (9000,)), torch.randint(0, 10, (9000,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    names = list(tasks)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for step, (x, task_id, y) in enumerate(loader):
            task = names[step % len(names)]
            out = model(x.to(device), task)
            loss = out.float().mean() if task != "classify" else nn.functional.cross_entropy(out, y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
