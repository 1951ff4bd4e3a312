# expect: dataparallel
# source: https://github.com/image-infomatics/neutorch/pull/16
# reason: The volumetric segmentation trainer spread its batch over several GPUs with nn.DataParallel; the maintainer's merged change replaces it with DistributedDataParallel, one process per GPU, to make real use of multiple GPUs.
import os

import click
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class UNet3d(nn.Module):
    def __init__(self, in_channels=1, out_channels=3, width=16):
        super().__init__()
        self.down = nn.Sequential(nn.Conv3d(in_channels, width, 3, padding=1), nn.ReLU(),
                                  nn.Conv3d(width, width * 2, 3, stride=2, padding=1), nn.ReLU())
        self.up = nn.Sequential(nn.ConvTranspose3d(width * 2, width, 2, stride=2), nn.ReLU(),
                                nn.Conv3d(width, out_channels, 1))

    def forward(self, x):
        return self.up(self.down(x))


class Trainer:
    def __init__(self, output_dir, learning_rate, batch_size, num_gpus):
        self.output_dir = output_dir
        os.makedirs(output_dir, exist_ok=True)
        self.device = torch.device("cuda")
        model = UNet3d()
        if num_gpus > 1:
            model = torch.nn.DataParallel(model, device_ids=list(range(num_gpus)))
        self.model = model.to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=learning_rate)
        self.loss_module = nn.BCEWithLogitsLoss()
        volumes = TensorDataset(torch.rand(256, 1, 64, 64, 64), torch.randint(0, 2, (256, 3, 64, 64, 64)).float())
        self.loader = DataLoader(volumes, batch_size=batch_size * max(num_gpus, 1), shuffle=True, num_workers=4)

    def run(self, iter_stop, save_interval=1000):
        iter_idx = 0
        while iter_idx < iter_stop:
            for image, label in self.loader:
                logits = self.model(image.to(self.device))
                loss = self.loss_module(logits, label.to(self.device))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                iter_idx += 1
                if iter_idx % save_interval == 0:
                    torch.save(self.model.state_dict(), os.path.join(self.output_dir, f"model_{iter_idx}.chkpt"))
                if iter_idx >= iter_stop:
                    break


@click.command()
@click.option("--output-dir", "-o", default="./output")
@click.option("--learning-rate", "-l", type=float, default=0.001)
@click.option("--batch-size", "-b", type=int, default=1)
@click.option("--num-gpus", "-g", type=int, default=torch.cuda.device_count())
@click.option("--iter-stop", "-e", type=int, default=200000)
def train(output_dir, learning_rate, batch_size, num_gpus, iter_stop):
    Trainer(output_dir, learning_rate, batch_size, num_gpus).run(iter_stop)


if __name__ == "__main__":
    train()
