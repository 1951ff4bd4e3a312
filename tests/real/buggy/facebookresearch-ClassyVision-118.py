# expect: missing-set-epoch
# source: https://github.com/facebookresearch/ClassyVision/pull/118
# reason: The fix passes the epoch to the sampler factory; the dataset class built its DistributedSampler without it, so each epoch used the same shuffle.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class ClassyDataset:
    def __init__(self, tensors, batchsize_per_replica, shuffle):
        self.dataset = TensorDataset(*tensors)
        self.batchsize_per_replica = batchsize_per_replica
        self.shuffle = shuffle

    def _get_sampler(self):
        world_size = dist.get_world_size() if dist.is_initialized() else 1
        rank = dist.get_rank() if dist.is_initialized() else 0
        return DistributedSampler(self.dataset, num_replicas=world_size, rank=rank, shuffle=self.shuffle)

    def iterator(self, num_workers=4, pin_memory=True):
        return DataLoader(self.dataset, batch_size=self.batchsize_per_replica, num_workers=num_workers,
                          pin_memory=pin_memory, sampler=self._get_sampler())


class ClassificationTask:
    def __init__(self, dataset, model, num_epochs, device):
        self.dataset, self.model, self.num_epochs, self.device = dataset, model, num_epochs, device
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train(self):
        for phase in range(self.num_epochs):
            for x, y in self.dataset.iterator():
                out = self.model(x.to(self.device, non_blocking=True))
                loss = nn.functional.cross_entropy(out, y.to(self.device, non_blocking=True))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    dataset = ClassyDataset((torch.randn(10000, 128), torch.randint(0, 10, (10000,))), 32, shuffle=True)
    model = DDP(nn.Linear(128, 10).to(device), device_ids=[local_rank])
    ClassificationTask(dataset, model, num_epochs=90, device=device).train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
