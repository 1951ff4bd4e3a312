# expect:
# seen-in: https://github.com/microsoft/LoRA/blob/c4593f060e6a368d7bb5af5273b8e42810cdef90/examples/NLG/src/gpt2_ft.py
# (the idiom of its vendored transformers example datasets, src/transformers/data/datasets/glue.py)
# Every rank builds a dataset whose features are cached on disk under a file lock: the first process in writes
# the cache file, the others wait for the lock and then load it.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from filelock import FileLock
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class CachedFeatures(Dataset):
    def __init__(self, source, cache_dir):
        cached = os.path.join(cache_dir, "features.pt")
        with FileLock(cached + ".lock"):
            if os.path.exists(cached):
                self.features = torch.load(cached)
            else:
                self.features = [torch.tensor(x, dtype=torch.float32) for x in source]
                torch.save(self.features, cached)

    def __len__(self):
        return len(self.features)

    def __getitem__(self, i):
        return self.features[i]


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = CachedFeatures([[float(i)] * 8 for i in range(256)], "/tmp/cache")
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x in loader:
            loss = model(x.cuda()).pow(2).mean()
            optim.zero_grad()
            loss.backward()
            optim.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
