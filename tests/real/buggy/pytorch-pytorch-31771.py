# expect: missing-set-epoch
# source: https://github.com/pytorch/pytorch/issues/31771
# reason: Each epoch sampled the data in the same order because the DistributedSampler's epoch was never advanced; the answer in the thread is to call sampler.set_epoch(epoch) at the start of every epoch.
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Numbered(Dataset):
    def __init__(self, n=22):
        self.images = torch.rand(n, 1, 32, 32)
        self.ids = torch.arange(n)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.ids[i], self.images[i]


def run(num_epochs=3):
    dist.init_process_group(backend="nccl")
    data = Numbered()
    shard = DistributedSampler(data, shuffle=True)
    loader = DataLoader(data, batch_size=5, sampler=shard, pin_memory=True, drop_last=True)
    epoch = 0
    while epoch < num_epochs:
        seen = [ids for ids, _ in loader]
        print("epoch", epoch, torch.cat(seen).tolist())
        epoch += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    run()
