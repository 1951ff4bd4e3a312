# expect: missing-distributed-sampler
# source: https://github.com/EleutherAI/oslo/pull/60
# reason: The DDP path wrapped the model but fed every process the full dataset; the PR (resolving issue 59) adds a DistributedSampler so each GPU gets its own shard.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset


class Accelerator:
    """A small hand-written helper: set up the process group, wrap the model, build the loader."""

    def __init__(self):
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.device = torch.device("cuda", self.local_rank)

    def prepare_model(self, model):
        return DistributedDataParallel(model.to(self.device), device_ids=[self.local_rank])

    def prepare_loader(self, dataset, batch_size):
        return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=2)

    def close(self):
        dist.destroy_process_group()


def main():
    acc = Accelerator()
    model = acc.prepare_model(nn.Sequential(nn.Embedding(50257, 256), nn.Linear(256, 50257)))
    loader = acc.prepare_loader(TensorDataset(torch.randint(0, 50257, (20000, 64))), batch_size=8)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)
    for epoch in range(3):
        for (ids,) in loader:
            ids = ids.to(acc.device)
            loss = nn.functional.cross_entropy(model(ids[:, :-1]).flatten(0, 1), ids[:, 1:].flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    acc.close()


if __name__ == "__main__":
    main()
