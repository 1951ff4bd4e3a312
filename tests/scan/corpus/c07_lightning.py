# expect: none
# Lightning owns the process group, the samplers and rank-zero logging.
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class LitModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        print("step", batch_idx)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    ds = TensorDataset(torch.randn(512, 16), torch.randn(512, 1))
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=3)
    trainer.fit(LitModel(), DataLoader(ds, batch_size=32, shuffle=True, num_workers=8))
