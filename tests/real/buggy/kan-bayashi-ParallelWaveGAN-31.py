# expect: checkpoint-without-module
# source: https://github.com/kan-bayashi/ParallelWaveGAN/pull/31
# reason: With distributed training the generator and discriminator held in the trainer's model dict were DistributedDataParallel wrappers, and the checkpoint stored their state dicts with the "module." prefix, so the decoding script could not load them; the maintainer's merged fix saves the wrapped modules' state dicts.
import argparse

import torch
import torch.nn as nn
from apex.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(80, 64, 3, padding=1), nn.ReLU(), nn.Conv1d(64, 1, 3, padding=1))

    def forward(self, c):
        return self.net(c)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(1, 64, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv1d(64, 1, 3, padding=1))

    def forward(self, x):
        return self.net(x)


class Trainer:
    def __init__(self, model, optimizer, data_loader, sampler, device):
        self.model = model
        self.optimizer = optimizer
        self.data_loader = data_loader
        self.sampler = sampler
        self.device = device
        self.steps = 0
        self.epochs = 0

    def run(self, train_max_steps, save_interval, outdir):
        while self.steps < train_max_steps:
            self.sampler.set_epoch(self.epochs)
            for mel, audio in self.data_loader:
                mel, audio = mel.to(self.device), audio.to(self.device)
                fake = self.model["generator"](mel)
                gen_loss = ((1 - self.model["discriminator"](fake)) ** 2).mean() + nn.functional.l1_loss(fake, audio)
                self.optimizer["generator"].zero_grad()
                gen_loss.backward()
                self.optimizer["generator"].step()
                dis_loss = (self.model["discriminator"](fake.detach()) ** 2).mean() + (
                    (1 - self.model["discriminator"](audio)) ** 2).mean()
                self.optimizer["discriminator"].zero_grad()
                dis_loss.backward()
                self.optimizer["discriminator"].step()
                self.steps += 1
                if self.steps % save_interval == 0 and torch.distributed.get_rank() == 0:
                    self.save_checkpoint(f"{outdir}/checkpoint-{self.steps}steps.pkl")
            self.epochs += 1

    def save_checkpoint(self, checkpoint_path):
        state_dict = {
            "optimizer": {
                "generator": self.optimizer["generator"].state_dict(),
                "discriminator": self.optimizer["discriminator"].state_dict(),
            },
            "steps": self.steps,
            "epochs": self.epochs,
            "model": {
                "generator": self.model["generator"].state_dict(),
                "discriminator": self.model["discriminator"].state_dict(),
            },
        }
        torch.save(state_dict, checkpoint_path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--outdir", default="exp")
    args = parser.parse_args()
    torch.cuda.set_device(args.rank)
    torch.distributed.init_process_group(backend="nccl", init_method="env://")
    device = torch.device("cuda")
    data = TensorDataset(torch.randn(2000, 80, 32), torch.randn(2000, 1, 32))
    sampler = DistributedSampler(data, shuffle=True)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    model = {"generator": Generator().to(device), "discriminator": Discriminator().to(device)}
    optimizer = {k: torch.optim.Adam(m.parameters(), lr=1e-4) for k, m in model.items()}
    model["generator"] = DistributedDataParallel(model["generator"])
    model["discriminator"] = DistributedDataParallel(model["discriminator"])
    Trainer(model, optimizer, loader, sampler, device).run(400000, 5000, args.outdir)


if __name__ == "__main__":
    main()
