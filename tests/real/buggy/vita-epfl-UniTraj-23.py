# expect: logging-from-all-ranks
# source: https://github.com/vita-epfl/UniTraj/pull/23
# reason: The LightningModule's shared logging helper calls `wandb.log` with a prediction image on the first validation batch from every process; under multi-GPU DDP only rank 0's WandbLogger has called `wandb.init()`, so the other ranks crash with "You must call wandb.init() before wandb.log()"; the merged fix guards the call with `self.local_rank == 0`.
import argparse

import matplotlib
import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn as nn
import wandb
from pytorch_lightning.loggers import WandbLogger
from torch.utils.data import DataLoader, Dataset

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


class TrajectoryDataset(Dataset):
    def __init__(self, n, past_len=21, future_len=60):
        self.past = torch.randn(n, past_len, 2).cumsum(1)
        self.future = self.past[:, -1:, :] + torch.randn(n, future_len, 2).cumsum(1)

    def __len__(self):
        return len(self.past)

    def __getitem__(self, idx):
        return {"past": self.past[idx], "future": self.future[idx]}


def draw_prediction(batch, prediction, index=0):
    fig, ax = plt.subplots(figsize=(4, 4))
    past = batch["past"][index].cpu().numpy()
    future = batch["future"][index].cpu().numpy()
    modes = prediction["trajectories"][index].detach().cpu().numpy()
    ax.plot(past[:, 0], past[:, 1], "k-")
    ax.plot(future[:, 0], future[:, 1], "g-")
    for mode in modes:
        ax.plot(mode[:, 0], mode[:, 1], "r--", alpha=0.5)
    fig.canvas.draw()
    image = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
    plt.close(fig)
    return image


class MotionPredictor(pl.LightningModule):
    def __init__(self, past_len=21, future_len=60, modes=6, hidden=128, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = nn.GRU(2, hidden, batch_first=True)
        self.decoder = nn.Linear(hidden, modes * future_len * 2)
        self.scorer = nn.Linear(hidden, modes)

    def forward(self, batch):
        _, h = self.encoder(batch["past"])
        h = h[-1]
        trajs = self.decoder(h).view(-1, self.hparams.modes, self.hparams.future_len, 2)
        trajs = trajs + batch["past"][:, -1:, None, :].transpose(1, 2)
        probs = self.scorer(h).softmax(-1)
        ade = (trajs - batch["future"][:, None]).norm(dim=-1).mean(-1)
        loss = ade.min(dim=1).values.mean() + nn.functional.cross_entropy(self.scorer(h), ade.argmin(1))
        return {"trajectories": trajs, "probabilities": probs, "ade": ade}, loss

    def training_step(self, batch, batch_idx):
        prediction, loss = self(batch)
        self.log_info(batch, batch_idx, prediction, status="train")
        return loss

    def validation_step(self, batch, batch_idx):
        prediction, loss = self(batch)
        self.log_info(batch, batch_idx, prediction, status="val")
        return loss

    def log_info(self, batch, batch_idx, prediction, status="train"):
        min_ade = prediction["ade"].min(dim=1).values
        fde = (prediction["trajectories"][:, :, -1] - batch["future"][:, None, -1]).norm(dim=-1)
        metrics = {"minADE6": min_ade.mean(), "minFDE6": fde.min(dim=1).values.mean()}
        for key, value in metrics.items():
            self.log(f"{status}/{key}", value, on_step=False, on_epoch=True, sync_dist=True,
                     batch_size=len(min_ade))
        if status == "val" and batch_idx == 0:
            image = draw_prediction(batch, prediction)
            wandb.log({"prediction": [wandb.Image(image)]})

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--max_epochs", type=int, default=40)
    parser.add_argument("--project", default="trajectory-prediction")
    args = parser.parse_args()

    pl.seed_everything(42)
    train_loader = DataLoader(TrajectoryDataset(20000), batch_size=args.batch_size, shuffle=True, num_workers=4)
    val_loader = DataLoader(TrajectoryDataset(2000), batch_size=args.batch_size, shuffle=False, num_workers=4)
    logger = WandbLogger(project=args.project, name="motion-predictor")
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.devices,
        strategy="ddp",
        max_epochs=args.max_epochs,
        logger=logger,
        gradient_clip_val=5.0,
    )
    trainer.fit(MotionPredictor(), train_loader, val_loader)


if __name__ == "__main__":
    main()
