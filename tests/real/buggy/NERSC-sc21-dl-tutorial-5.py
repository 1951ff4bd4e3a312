# expect: missing-distributed-sampler
# source: https://github.com/NERSC/sc21-dl-tutorial/pull/5
# reason: get_data_loader_distributed() receives the rank but builds a plain DataLoader, so every rank runs the full number of samples per epoch and adding GPUs does not shorten an epoch; the merged PR gives the default loader a DistributedSampler that partitions the global batch across ranks.
import argparse
import logging
import os
import time

import numpy as np
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset


def worker_init(wrk_id):
    np.random.seed(torch.utils.data.get_worker_info().seed % (2**32 - 1))


class RandomCropDataset(Dataset):
    """Random crops of an in-memory volume."""

    def __init__(self, length=256, size=64, nsamples=4096):
        self.length, self.size, self.nsamples = length, size, nsamples
        self.inp = np.random.normal(size=(4, length, length, length)).astype(np.float32)
        self.tar = np.random.normal(size=(5, length, length, length)).astype(np.float32)

    def __len__(self):
        return self.nsamples

    def __getitem__(self, idx):
        x, y, z = np.random.randint(0, self.length - self.size, size=3)
        inp = self.inp[:, x:x + self.size, y:y + self.size, z:z + self.size]
        tar = self.tar[:, x:x + self.size, y:y + self.size, z:z + self.size]
        return torch.as_tensor(np.copy(inp)), torch.as_tensor(np.copy(tar))


def get_data_loader_distributed(batch_size, num_workers, world_rank, device=0):
    train_data = RandomCropDataset()
    train_loader = DataLoader(train_data,
                              batch_size=batch_size,
                              num_workers=num_workers,
                              worker_init_fn=worker_init,
                              persistent_workers=True,
                              pin_memory=torch.cuda.is_available())
    return train_loader


def train(args, local_rank, world_rank, world_size):
    torch.backends.cudnn.benchmark = True
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda:%d" % local_rank)

    train_data_loader = get_data_loader_distributed(args.batch_size, args.num_data_workers, world_rank, device.index)
    model = nn.Sequential(nn.Conv3d(4, 16, 3, padding=1), nn.LeakyReLU(), nn.Conv3d(16, 5, 3, padding=1)).to(device)
    if world_size > 1:
        model = DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)

    for epoch in range(args.num_epochs):
        start = time.time()
        model.train()
        step_count = 0
        for data in train_data_loader:
            inp, tar = map(lambda x: x.to(device), data)
            optimizer.zero_grad()
            loss = nn.functional.l1_loss(model(inp), tar)
            loss.backward()
            optimizer.step()
            step_count += 1
        if world_rank == 0:
            logging.info("Time taken for epoch %d is %f sec, %f samples/sec", epoch + 1, time.time() - start,
                         step_count * args.batch_size / (time.time() - start))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", default=64, type=int, help="per gpu batchsize")
    parser.add_argument("--num_data_workers", default=4, type=int)
    parser.add_argument("--num_epochs", default=10, type=int)
    args = parser.parse_args()

    world_size = int(os.environ.get("WORLD_SIZE", 1))
    world_rank = 0
    local_rank = 0
    if world_size > 1:
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        world_rank = torch.distributed.get_rank()
        local_rank = int(os.environ["LOCAL_RANK"])
    train(args, local_rank, world_rank, world_size)
