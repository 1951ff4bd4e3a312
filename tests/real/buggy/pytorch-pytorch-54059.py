# expect: collective-mismatch
# source: https://github.com/pytorch/pytorch/issues/54059
# reason: Validation ran through the DDP model inside "if gpu == 0:" and a barrier followed: the DDP forward on rank 0 issues collectives the other ranks never join, so the job hung; the maintainer reproduced it and suggested validating on every rank (or outside DDP).
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

os.environ["MASTER_ADDR"] = "localhost"
os.environ["MASTER_PORT"] = "12346"


class ImgClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 16 * 16, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv1(x))), 2)
        return self.fc(x.flatten(1))


def train(gpu, world_size):
    dist.init_process_group("nccl", rank=gpu, world_size=world_size)
    torch.cuda.set_device(gpu)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(ImgClassifier()).cuda(gpu)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_set = TensorDataset(torch.randn(5000, 3, 32, 32), torch.randint(0, 10, (5000,)))
    valid_set = TensorDataset(torch.randn(1000, 3, 32, 32), torch.randint(0, 10, (1000,)))
    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=gpu)
    train_loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    valid_loader = DataLoader(valid_set, batch_size=64)
    for epoch in range(20):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            loss = F.cross_entropy(model(x.cuda(gpu)), y.cuda(gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if gpu == 0:
            model.eval()
            correct = 0
            with torch.no_grad():
                for x, y in valid_loader:
                    correct += (model(x.cuda(gpu)).argmax(1) == y.cuda(gpu)).sum().item()
            print(f"epoch {epoch}: accuracy {correct / len(valid_set):.3f}")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    n_gpus = torch.cuda.device_count()
    mp.spawn(train, args=(n_gpus,), nprocs=n_gpus, join=True)
