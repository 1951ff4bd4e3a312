# expect: missing-set-epoch
# source: https://github.com/BatsResearch/taglets/pull/28
# reason: The merged PR adds sampler.set_epoch in Trainable's training loop so DistributedSampler shuffles differently each epoch.
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Trainable:
    def __init__(self, model, num_epochs=30, batch_size=32):
        self.model = model
        self.num_epochs = num_epochs
        self.batch_size = batch_size

    def _do_train(self, rank, world_size, train_data):
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456", rank=rank, world_size=world_size)
        torch.cuda.set_device(rank)
        sampler = DistributedSampler(train_data, num_replicas=world_size, rank=rank, shuffle=True)
        loader = DataLoader(train_data, batch_size=self.batch_size, sampler=sampler, num_workers=0)
        model = DistributedDataParallel(self.model.cuda(rank), device_ids=[rank])
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        for epoch in range(self.num_epochs):
            model.train()
            for inputs, labels in loader:
                inputs, labels = inputs.cuda(rank), labels.cuda(rank)
                loss = nn.functional.cross_entropy(model(inputs), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        dist.destroy_process_group()

    def train(self, train_data):
        world_size = torch.cuda.device_count()
        mp.spawn(self._do_train, args=(world_size, train_data), nprocs=world_size, join=True)


if __name__ == "__main__":
    data = TensorDataset(torch.randn(3000, 256), torch.randint(0, 5, (3000,)))
    Trainable(nn.Sequential(nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 5))).train(data)
