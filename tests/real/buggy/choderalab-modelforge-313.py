# expect: collective-mismatch
# source: https://github.com/choderalab/modelforge/pull/313
# reason: Logging the epoch time was meant to happen on the main process only, so the self.log call sat under `if self.global_rank == 0:`; the log call synchronises across processes and training froze after the first epoch; the merged fix drops the rank test and passes rank_zero_only=True to self.log.
import time

import lightning as L
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class PotentialTrainer(L.LightningModule):
    def __init__(self, n_atoms_features=64, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(n_atoms_features, 128), nn.SiLU(), nn.Linear(128, 1))
        self.loss_fn = nn.MSELoss()
        self.epoch_start_time = None

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def on_train_epoch_start(self):
        self.epoch_start_time = time.time()

    def training_step(self, batch, batch_idx):
        x, energy = batch
        loss = self.loss_fn(self(x), energy)
        self.log("train/loss", loss, on_step=False, on_epoch=True, sync_dist=True)
        return loss

    def on_train_epoch_end(self):
        if self.global_rank == 0:
            epoch_time = time.time() - self.epoch_start_time
            self.log("train/epoch_time", epoch_time, on_epoch=True, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


def main():
    data = TensorDataset(torch.randn(10000, 64), torch.randn(10000))
    loader = DataLoader(data, batch_size=128, shuffle=True, num_workers=4)
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=100)
    trainer.fit(PotentialTrainer(), loader)


if __name__ == "__main__":
    main()
