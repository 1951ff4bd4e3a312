import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def build_train_loader(batch_size):
    rows = TensorDataset(torch.randn(1024, 16), torch.randint(0, 2, (1024,)))
    loader = DataLoader(rows, batch_size=batch_size, shuffle=True, num_workers=2)
    return loader, len(rows)


def build_eval_loader(batch_size, rank, world_size):
    rows = TensorDataset(torch.randn(256, 16), torch.randint(0, 2, (256,)))
    sampler = DistributedSampler(rows, num_replicas=world_size, rank=rank, shuffle=False)
    return DataLoader(rows, batch_size=batch_size, sampler=sampler)
