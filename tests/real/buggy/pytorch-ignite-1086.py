# expect: checkpoint-without-module
# source: https://github.com/pytorch/ignite/pull/1086
# reason: The checkpoint handler stored the state of whatever model object it was given; with a DDP-wrapped model that is the wrapper's state_dict with "module."-prefixed keys. The merged fix saves model.module.state_dict() for DDP and DataParallel.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class ModelCheckpoint:
    def __init__(self, dirname, prefix, n_saved=2):
        self.dirname = dirname
        self.prefix = prefix
        self.n_saved = n_saved
        self.saved = []

    def __call__(self, epoch, to_save):
        if dist.get_rank() != 0:
            return
        checkpoint = {name: obj.state_dict() for name, obj in to_save.items()}
        path = os.path.join(self.dirname, f"{self.prefix}_checkpoint_{epoch}.pt")
        torch.save(checkpoint, path)
        self.saved.append(path)
        if len(self.saved) > self.n_saved:
            os.remove(self.saved.pop(0))


def training(local_rank, config):
    device = torch.device("cuda", local_rank)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    dataset = TensorDataset(torch.randn(60000, 784), torch.randint(0, 10, (60000,)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=config["batch_size"], sampler=sampler)
    checkpointer = ModelCheckpoint(config["output_path"], "mnist")
    for epoch in range(config["num_epochs"]):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        checkpointer(epoch, {"model": model, "optimizer": optimizer})


if __name__ == "__main__":
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl")
    training(rank, {"batch_size": 64, "num_epochs": 10, "output_path": "/tmp/output"})
    dist.destroy_process_group()
