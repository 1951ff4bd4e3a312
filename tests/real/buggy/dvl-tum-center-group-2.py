# expect: collective-mismatch
# source: https://github.com/dvl-tum/center-group/pull/2
# reason: The Lightning module logged its validation metrics only under `if self.world_rank == 0:` without rank_zero_only=True, so Lightning waited for the other processes to log the same keys and multi-GPU validation deadlocked; the merged fix passes rank_zero_only=True to self.log.
import os

import pytorch_lightning as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class GroupingModule(pl.LightningModule):
    def __init__(self, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 17))
        self.world_rank = int(os.environ.get("RANK", 0))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return {"err": (self.net(x) - y).abs().mean().detach()}

    def validation_epoch_end(self, outputs):
        mean_err = torch.stack([o["err"] for o in outputs]).mean()
        if self.world_rank == 0:
            self.log("val_err", mean_err, prog_bar=True)
            self.log("val_ap", 1.0 - mean_err)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def loaders():
    train = TensorDataset(torch.randn(2048, 64), torch.randn(2048, 17))
    val = TensorDataset(torch.randn(256, 64), torch.randn(256, 17))
    return DataLoader(train, batch_size=32, shuffle=True), DataLoader(val, batch_size=32)


if __name__ == "__main__":
    train_loader, val_loader = loaders()
    trainer = pl.Trainer(gpus=2, accelerator="ddp", max_epochs=20)
    trainer.fit(GroupingModule(), train_loader, val_loader)
