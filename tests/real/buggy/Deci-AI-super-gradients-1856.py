# expect: missing-distributed-sampler
# source: https://github.com/Deci-AI/super-gradients/pull/1856
# reason: A non-distributed sampler given in the loader parameters was used unchanged when training in DDP mode, so every rank iterated the same samples; the merged PR wraps it in a DistributedSamplerWrapper automatically in distributed mode.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler

SAMPLERS = {"RandomSampler": RandomSampler, "SequentialSampler": SequentialSampler,
            "DistributedSampler": DistributedSampler}


def is_distributed():
    return dist.is_available() and dist.is_initialized()


def get_data_loader(dataset, dataloader_params):
    params = dict(dataloader_params)
    sampler_name = params.pop("sampler", None)
    if sampler_name is not None:
        params["sampler"] = SAMPLERS[sampler_name](dataset)
    elif is_distributed():
        params["sampler"] = DistributedSampler(dataset)
    return DataLoader(dataset, **params)


class Trainer:
    def __init__(self, device):
        self.device = device

    def train(self, model, train_loader, max_epochs):
        net = nn.parallel.DistributedDataParallel(model.to(self.device), device_ids=[self.device.index])
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        for epoch in range(max_epochs):
            if hasattr(train_loader.sampler, "set_epoch"):
                train_loader.sampler.set_epoch(epoch)
            for images, labels in train_loader:
                loss = nn.functional.cross_entropy(net(images.to(self.device)), labels.to(self.device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = TensorDataset(torch.randn(8000, 3 * 32 * 32), torch.randint(0, 10, (8000,)))
    loader = get_data_loader(dataset, {"batch_size": 64, "num_workers": 4, "sampler": "RandomSampler"})
    Trainer(torch.device("cuda", local_rank)).train(nn.Linear(3 * 32 * 32, 10), loader, max_epochs=100)
