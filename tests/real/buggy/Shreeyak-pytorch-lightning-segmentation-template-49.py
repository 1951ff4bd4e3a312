# expect: logging-from-all-ranks
# source: https://github.com/Shreeyak/pytorch-lightning-segmentation-template/issues/49
# reason: Under DDP every process created its own timestamped log directory and its own wandb run id; the fix runs the log-directory and logger setup on global rank 0 only (rank_zero_only).
import datetime
import os

import pytorch_lightning as pl
import torch
import torch.nn as nn
from pytorch_lightning.loggers import WandbLogger
from torch.utils.data import DataLoader, TensorDataset


class SegModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 4, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def make_log_dir(root):
    run_dir = os.path.join(root, datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f"))
    os.makedirs(run_dir, exist_ok=True)
    return run_dir


def main():
    log_dir = make_log_dir("logs")
    logger = WandbLogger(project="segmentation", save_dir=log_dir, id=os.path.basename(log_dir))
    data = TensorDataset(torch.randn(512, 3, 64, 64), torch.randint(0, 4, (512, 64, 64)))
    trainer = pl.Trainer(gpus=4, accelerator="ddp", max_epochs=50, logger=logger, default_root_dir=log_dir)
    trainer.fit(SegModel(), DataLoader(data, batch_size=8))


if __name__ == "__main__":
    main()
