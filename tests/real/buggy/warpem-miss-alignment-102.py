# expect: unnecessary-find-unused-parameters
# source: https://github.com/warpem/miss-alignment/pull/102
# reason: The Lightning trainer was built with DDPStrategy(find_unused_parameters=True) although the models are plain feed-forward 3D CNNs whose every parameter contributes to the loss on every step, so DDP traversed the autograd graph after every forward for nothing; the merged PR switches it to find_unused_parameters=False.
import argparse

import lightning.pytorch as pl
import torch
import torch.nn as nn
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, TensorDataset


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv3d(cin, cout, 3, padding=1), nn.BatchNorm3d(cout), nn.LeakyReLU(0.1),
                         nn.Conv3d(cout, cout, 3, padding=1), nn.BatchNorm3d(cout), nn.LeakyReLU(0.1))


class CompactNet(nn.Module):
    def __init__(self, width=16, depth=3):
        super().__init__()
        layers, cin = [], 1
        for i in range(depth):
            layers += [conv_block(cin, width * 2 ** i), nn.MaxPool3d(2)]
            cin = width * 2 ** i
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Linear(cin, 1))

    def forward(self, x):
        return self.head(self.features(x)).squeeze(-1)


class MisalignmentModule(pl.LightningModule):
    def __init__(self, lr=3e-4, width=16):
        super().__init__()
        self.save_hyperparameters()
        self.net = CompactNet(width=width)
        self.loss = nn.BCEWithLogitsLoss()

    def training_step(self, batch, batch_idx):
        patches, labels = batch
        loss = self.loss(self.net(patches), labels)
        self.log("train/loss", loss, prog_bar=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        patches, labels = batch
        self.log("val/loss", self.loss(self.net(patches), labels), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


def make_loaders(patch_size, batch_size):
    train = TensorDataset(torch.randn(2048, 1, patch_size, patch_size, patch_size), torch.randint(0, 2, (2048,)).float())
    val = TensorDataset(torch.randn(256, 1, patch_size, patch_size, patch_size), torch.randint(0, 2, (256,)).float())
    return (DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=4),
            DataLoader(val, batch_size=batch_size, num_workers=4))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--patch-size", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=50)
    args = parser.parse_args()
    train_loader, val_loader = make_loaders(args.patch_size, args.batch_size)
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.devices,
        strategy=DDPStrategy(find_unused_parameters=True),
        max_epochs=args.epochs,
        precision="16-mixed",
        callbacks=[ModelCheckpoint(monitor="val/loss", save_last=True)],
    )
    trainer.fit(MisalignmentModule(), train_loader, val_loader)


if __name__ == "__main__":
    main()
