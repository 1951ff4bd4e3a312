# expect: collective-mismatch
# source: https://github.com/Lightning-AI/torchmetrics/issues/2684
# reason: Validation hung with more than one device: FrechetInceptionDistance.compute() ran in an on_validation_end hook decorated with rank_zero_only, but a torchmetrics metric syncs its state across processes in compute(), so rank 0 waited in a gather the other ranks never joined; the maintainers documented the pitfall (PR 2719): compute on every rank, or build the metric with sync_on_compute=False.
import lightning as L
import torch
import torch.nn as nn
from lightning.pytorch.utilities import rank_zero_only
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.image.fid import FrechetInceptionDistance


class VideoGenerator(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 3, 3, padding=1))
        self.fid = FrechetInceptionDistance(feature=64, normalize=True)
        self.last_val_batch = None

    def forward(self, x):
        return torch.sigmoid(self.net(x))

    def training_step(self, batch, batch_idx):
        frames, target = batch
        loss = nn.functional.l1_loss(self(frames), target)
        self.log("train/loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        self.last_val_batch = batch
        frames, target = batch
        self.log("val/loss", nn.functional.l1_loss(self(frames), target), sync_dist=True)

    @rank_zero_only
    def on_validation_end(self) -> None:
        if self.global_rank == 0:
            frames, target = self.last_val_batch
            with torch.no_grad():
                pred = self(frames)
            self.fid.update(target, real=True)
            self.fid.update(pred, real=False)
            score = self.fid.compute()
            self.fid.reset()
            print(f"FID {score.item():.2f}")

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-4)


def main():
    data = TensorDataset(torch.rand(256, 3, 64, 64), torch.rand(256, 3, 64, 64))
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=10)
    trainer.fit(VideoGenerator(), DataLoader(data, batch_size=8), DataLoader(data, batch_size=8))


if __name__ == "__main__":
    main()
