# expect: collective-mismatch
# source: https://github.com/talmolab/sleap-nn/pull/437
# reason: Multi-GPU training froze after each epoch: visualisation callbacks returned early on the non-zero ranks (and on rank 0 when no logger was set) before trainer.strategy.barrier(), which only some ranks then reached; the merged fix keeps the rank-0 work in an `if trainer.is_global_zero:` block and has every rank reach the barrier.
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class VizCallback(pl.Callback):
    def __init__(self, every_n_epochs=1):
        self.every_n_epochs = every_n_epochs

    def on_train_epoch_end(self, trainer, pl_module):
        if not trainer.is_global_zero:
            return
        if trainer.logger is None:
            return
        if trainer.current_epoch % self.every_n_epochs == 0:
            with torch.no_grad():
                preds = pl_module(torch.randn(4, 16, device=pl_module.device))
            trainer.logger.log_metrics({"viz_mean": preds.mean().item()}, step=trainer.global_step)
        trainer.strategy.barrier()


class PoseModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main():
    data = DataLoader(TensorDataset(torch.randn(512, 16), torch.randn(512, 2)), batch_size=32, shuffle=True)
    trainer = pl.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=5, callbacks=[VizCallback()])
    trainer.fit(PoseModel(), data)


if __name__ == "__main__":
    main()
