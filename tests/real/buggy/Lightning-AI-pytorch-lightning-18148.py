# expect: collective-mismatch
# source: https://github.com/Lightning-AI/pytorch-lightning/issues/18148
# reason: Under DDP the run froze after the first step whenever a hook decorated with @rank_zero_only read trainer.log_dir: resolving log_dir broadcasts the directory from rank 0, a collective the other processes never joined; reading it on every process (or outside the rank-zero hook) works.
import os

import lightning.pytorch as pl
import torch
from lightning.pytorch.utilities import rank_zero_only
from torch.utils.data import DataLoader, Dataset


class RandomDataset(Dataset):
    def __init__(self, size, length):
        self.data = torch.randn(length, size)

    def __getitem__(self, index):
        return self.data[index]

    def __len__(self):
        return len(self.data)


class BoringModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(32, 2)

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch, batch_idx):
        prediction = self(batch)
        loss = torch.nn.functional.mse_loss(prediction, torch.ones_like(prediction))
        self.log("train_loss", loss)
        return loss

    @rank_zero_only
    def on_fit_start(self):
        run_dir = self.trainer.log_dir
        os.makedirs(os.path.join(run_dir, "samples"), exist_ok=True)
        print(f"writing samples to {run_dir}")

    def configure_optimizers(self):
        return torch.optim.SGD(self.layer.parameters(), lr=0.1)


def run():
    train_data = DataLoader(RandomDataset(32, 64), batch_size=2)
    model = BoringModel()
    trainer = pl.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=3, enable_model_summary=False)
    trainer.fit(model, train_dataloaders=train_data)


if __name__ == "__main__":
    run()
