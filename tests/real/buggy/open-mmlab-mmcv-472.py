# expect: missing-set-epoch
# source: https://github.com/open-mmlab/mmcv/issues/472
# reason: The loader takes a custom batch sampler built on a DistributedSampler, but the epoch hook calls set_epoch on data_loader.sampler (the loader's default SequentialSampler), not on batch_sampler.sampler, so the distributed sampler never gets the epoch ('SequentialSampler' object has no attribute 'set_epoch'); confirmed by the maintainers.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import BatchSampler, DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class AspectRatioBatchSampler(BatchSampler):
    """Groups the indices of a DistributedSampler into batches of images with a similar aspect ratio."""

    def __init__(self, sampler, batch_size, flags):
        super().__init__(sampler, batch_size, drop_last=True)
        self.flags = flags

    def __iter__(self):
        buckets = {0: [], 1: []}
        for idx in self.sampler:
            bucket = buckets[int(self.flags[idx])]
            bucket.append(idx)
            if len(bucket) == self.batch_size:
                yield list(bucket)
                bucket.clear()


class DistSamplerSeedHook:
    def before_epoch(self, runner):
        runner.data_loader.sampler.set_epoch(runner.epoch)


class Runner:
    def __init__(self, model, optimizer, hooks):
        self.model = model
        self.optimizer = optimizer
        self.hooks = hooks
        self.epoch = 0
        self.data_loader = None

    def train(self, data_loader):
        self.data_loader = data_loader
        for hook in self.hooks:
            hook.before_epoch(self)
        for images, labels in data_loader:
            images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            loss = nn.functional.cross_entropy(self.model(images), labels)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        self.epoch += 1

    def run(self, data_loader, max_epochs):
        while self.epoch < max_epochs:
            self.train(data_loader)


def main():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    dataset = TensorDataset(torch.randn(4096, 32), torch.randint(0, 10, (4096,)))
    flags = torch.randint(0, 2, (4096,))
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_sampler=AspectRatioBatchSampler(sampler, 8, flags), num_workers=2)

    model = DistributedDataParallel(nn.Linear(32, 10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
    Runner(model, optimizer, [DistSamplerSeedHook()]).run(loader, max_epochs=12)


if __name__ == "__main__":
    main()
