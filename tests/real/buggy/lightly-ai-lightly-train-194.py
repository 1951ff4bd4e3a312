# expect: batch-size-mismatch
# source: https://github.com/lightly-ai/lightly-train/pull/194
# reason: train_task documents batch_size as the global batch size over all devices and nodes, but the task's data loaders were built with that value on every rank (Lightning Fabric then adds a DistributedSampler per process), so with N GPUs each step trained on N times the requested global batch; the merged fix divides the global batch size by the world size when building the data loaders.
import argparse

import torch
import torch.nn as nn
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, TensorDataset


class SegmentationModel(nn.Module):
    def __init__(self, num_classes=21):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 128, 3, 2, 1), nn.BatchNorm2d(128), nn.ReLU())
        self.decoder = nn.Sequential(nn.Conv2d(128, num_classes, 1), nn.Upsample(scale_factor=4, mode="bilinear"))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def get_dataloader(dataset, batch_size, num_workers, shuffle):
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, num_workers=num_workers, drop_last=shuffle)


def train_task(out, steps=10000, batch_size=16, num_workers=8, devices=4, num_nodes=1, lr=1e-4):
    """Train a semantic segmentation model.

    Args:
        out: Output directory for checkpoints and logs.
        steps: Number of training steps.
        batch_size: Global batch size. The batch size per device is the global batch size divided by the number
            of devices and nodes.
        num_workers: Data loader workers per device.
        devices: Number of devices per node.
        num_nodes: Number of nodes.
        lr: Learning rate.
    """
    fabric = Fabric(accelerator="gpu", strategy="ddp", devices=devices, num_nodes=num_nodes, precision="bf16-mixed")
    fabric.launch()
    train_dataset = TensorDataset(torch.randn(4096, 3, 128, 128), torch.randint(0, 21, (4096, 128, 128)))
    val_dataset = TensorDataset(torch.randn(512, 3, 128, 128), torch.randint(0, 21, (512, 128, 128)))
    train_dataloader = get_dataloader(train_dataset, batch_size, num_workers, shuffle=True)
    val_dataloader = get_dataloader(val_dataset, batch_size, num_workers, shuffle=False)
    train_dataloader, val_dataloader = fabric.setup_dataloaders(train_dataloader, val_dataloader)

    model = SegmentationModel()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model, optimizer = fabric.setup(model, optimizer)

    step = 0
    while step < steps:
        model.train()
        for images, masks in train_dataloader:
            loss = nn.functional.cross_entropy(model(images), masks)
            optimizer.zero_grad()
            fabric.backward(loss)
            optimizer.step()
            step += 1
            if step % 100 == 0:
                fabric.log("train_loss", loss.item(), step=step)
            if step >= steps:
                break
        model.eval()
        with torch.no_grad():
            val_loss = sum(nn.functional.cross_entropy(model(x), y) for x, y in val_dataloader) / len(val_dataloader)
        fabric.log("val_loss", val_loss.item(), step=step)
    fabric.save(f"{out}/last.ckpt", {"model": model, "optimizer": optimizer, "step": step})


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="out/segmentation")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--devices", type=int, default=4)
    args = parser.parse_args()
    train_task(out=args.out, batch_size=args.batch_size, devices=args.devices)
