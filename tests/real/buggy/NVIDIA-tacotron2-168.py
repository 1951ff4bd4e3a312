# expect: shuffle-with-sampler
# source: https://github.com/NVIDIA/tacotron2/issues/168
# reason: prepare_dataloaders passed shuffle=True with a DistributedSampler in distributed runs; the maintainer's fix on master (the sampler shuffles itself) resolved it.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def prepare_dataloaders(hparams):
    trainset = TensorDataset(torch.randint(0, 148, (13100, 120)), torch.randn(13100, 80, 200))
    if hparams.distributed_run:
        train_sampler = DistributedSampler(trainset)
        shuffle = True
    else:
        train_sampler = None
        shuffle = True
    train_loader = DataLoader(trainset, num_workers=1, shuffle=shuffle, sampler=train_sampler,
                              batch_size=hparams.batch_size, pin_memory=False, drop_last=True)
    return train_loader, train_sampler


def train(hparams):
    rank = int(os.environ.get("RANK", 0))
    if hparams.distributed_run:
        torch.cuda.set_device(rank % torch.cuda.device_count())
        dist.init_process_group(backend="nccl")
    model = nn.Sequential(nn.Embedding(148, 512), nn.Flatten(), nn.Linear(512 * 120, 80 * 200)).cuda()
    if hparams.distributed_run:
        model = DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_loader, train_sampler = prepare_dataloaders(hparams)
    for epoch in range(hparams.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        for text, mel in train_loader:
            loss = nn.functional.mse_loss(model(text.cuda()), mel.cuda().flatten(1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if hparams.distributed_run:
        dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--distributed_run", action="store_true")
    p.add_argument("--batch_size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=500)
    train(p.parse_args())
