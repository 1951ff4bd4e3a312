# expect: missing-set-device
# source: https://github.com/jik876/hifi-gan/pull/25
# reason: Each spawned training process joined the process group (backend read from the JSON config, nccl) and put its generator and discriminators on torch.device('cuda:{rank}') without ever selecting its GPU, so every process also opened a context on GPU 0 and memory was unbalanced across GPUs; the pull request adds torch.cuda.set_device(rank) and users confirmed the fix (balanced memory, faster start).
import argparse
import itertools
import json

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed import init_process_group
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class AttrDict(dict):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.__dict__ = self


class Generator(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.pre = nn.Conv1d(h.num_mels, 64, 7, padding=3)
        self.post = nn.Conv1d(64, 1, 7, padding=3)

    def forward(self, mel):
        return torch.tanh(self.post(F.leaky_relu(self.pre(mel), 0.1)))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 16, 15, padding=7)
        self.out = nn.Conv1d(16, 1, 3, padding=1)

    def forward(self, wav):
        return self.out(F.leaky_relu(self.conv(wav), 0.1))


def train(rank, a, h):
    if h.num_gpus > 1:
        init_process_group(backend=h.dist_config["dist_backend"], init_method=h.dist_config["dist_url"],
                           world_size=h.dist_config["world_size"] * h.num_gpus, rank=rank)

    torch.cuda.manual_seed(h.seed)
    device = torch.device("cuda:{:d}".format(rank))

    generator = Generator(h).to(device)
    disc = Discriminator().to(device)
    if h.num_gpus > 1:
        generator = DistributedDataParallel(generator, device_ids=[rank]).to(device)
        disc = DistributedDataParallel(disc, device_ids=[rank]).to(device)

    optim_g = torch.optim.AdamW(generator.parameters(), h.learning_rate, betas=[h.adam_b1, h.adam_b2])
    optim_d = torch.optim.AdamW(itertools.chain(disc.parameters()), h.learning_rate, betas=[h.adam_b1, h.adam_b2])

    trainset = TensorDataset(torch.randn(512, h.num_mels, 32), torch.randn(512, 1, 32))
    train_sampler = DistributedSampler(trainset) if h.num_gpus > 1 else None
    train_loader = DataLoader(trainset, num_workers=h.num_workers, shuffle=False, sampler=train_sampler,
                              batch_size=h.batch_size, pin_memory=True, drop_last=True)

    generator.train()
    disc.train()
    for epoch in range(a.training_epochs):
        if h.num_gpus > 1:
            train_sampler.set_epoch(epoch)
        for mel, wav in train_loader:
            mel = mel.to(device, non_blocking=True)
            wav = wav.to(device, non_blocking=True)
            fake = generator(mel)

            optim_d.zero_grad()
            loss_d = torch.mean((1 - disc(wav)) ** 2) + torch.mean(disc(fake.detach()) ** 2)
            loss_d.backward()
            optim_d.step()

            optim_g.zero_grad()
            loss_g = torch.mean((1 - disc(fake)) ** 2) + F.l1_loss(fake, wav) * 45
            loss_g.backward()
            optim_g.step()
            if rank == 0:
                print("Epoch {} Gen Loss {:4.3f}".format(epoch, loss_g.item()))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="config_v1.json")
    parser.add_argument("--training_epochs", default=3100, type=int)
    a = parser.parse_args()

    with open(a.config) as f:
        h = AttrDict(json.loads(f.read()))

    torch.manual_seed(h.seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(h.seed)
        h.num_gpus = torch.cuda.device_count()
        h.batch_size = int(h.batch_size / h.num_gpus)

    if h.num_gpus > 1:
        mp.spawn(train, nprocs=h.num_gpus, args=(a, h))
    else:
        train(0, a, h)


if __name__ == "__main__":
    main()
