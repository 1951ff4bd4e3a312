# expect: collective-mismatch
# source: https://github.com/alan-turing-institute/autocast/pull/386
# reason: trainer.save_checkpoint() ends in a strategy barrier every rank must enter, but it was called inside `if trainer.is_global_zero:`, so rank 0's extra barrier paired with the others' next one and the job hung until the NCCL watchdog fired; the merged fix calls it on every rank.
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Forecaster(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def run_training(cfg):
    model = Forecaster()
    data = DataLoader(TensorDataset(torch.randn(4096, 64), torch.randn(4096, 64)), batch_size=32)
    trainer = pl.Trainer(accelerator="gpu", devices=cfg["devices"], strategy="ddp", max_epochs=cfg["epochs"])
    trainer.fit(model, data)
    if trainer.is_global_zero:
        trainer.save_checkpoint(cfg["final_checkpoint"])
    trainer.strategy.barrier("checkpoint-alias-finalize")
    return model


if __name__ == "__main__":
    run_training({"devices": 4, "epochs": 10, "final_checkpoint": "runs/final.ckpt"})
