# expect: hf-cache-contention
# source: https://github.com/mosaicml/composer/issues/209
# reason: The trainer's checkpoint loader fetched the remote checkpoint (about 1 GB) on every rank at start-up, so an 8-GPU node downloaded the same file 8 times into the same place; the maintainers' fix (#215) downloads on rank 0 only and shares it with the other ranks after a barrier.
import os
import urllib.request

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class CheckpointLoader:
    def __init__(self, uri, cache_dir="/tmp/checkpoints"):
        self.uri = uri
        self.cache_dir = cache_dir

    def fetch(self):
        os.makedirs(self.cache_dir, exist_ok=True)
        local_path = os.path.join(self.cache_dir, os.path.basename(self.uri))
        urllib.request.urlretrieve(self.uri, local_path)
        return local_path

    def load_into(self, model):
        state = torch.load(self.fetch(), map_location="cpu")
        model.load_state_dict(state["model"])
        return state.get("epoch", 0)


class Trainer:
    def __init__(self, model, dataset, load_uri=None, epochs=10, batch_size=64):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.start_epoch = 0
        if load_uri:
            self.start_epoch = CheckpointLoader(load_uri).load_into(model)
        self.model = DistributedDataParallel(model.cuda(), device_ids=[self.local_rank])
        self.sampler = DistributedSampler(dataset)
        self.loader = DataLoader(dataset, batch_size=batch_size, sampler=self.sampler)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)
        self.epochs = epochs

    def fit(self):
        for epoch in range(self.start_epoch, self.epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.loader:
                x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
                loss = nn.functional.cross_entropy(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if dist.get_rank() == 0:
                print(f"epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(4096, 128), torch.randint(0, 10, (4096,)))
    net = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10))
    Trainer(net, data, load_uri=os.environ.get("RESUME_URI")).fit()
