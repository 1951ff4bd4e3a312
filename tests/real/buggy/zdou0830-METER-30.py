# expect: missing-distributed-sampler
# source: https://github.com/zdou0830/METER/issues/30
# reason: Steps per epoch did not shrink with 4 GPUs x 8 nodes; the reporter found they had commented out the DistributedSampler in the LightningDataModule while the Trainer is told not to insert one (replace_sampler_ddp=False), so every rank iterated the whole dataset.
import pytorch_lightning as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class PairDataset(Dataset):
    def __init__(self, n=10000):
        self.images = torch.randn(n, 3, 64, 64)
        self.tokens = torch.randint(0, 30000, (n, 40))

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i], self.tokens[i]


class MTDataModule(pl.LightningDataModule):
    def __init__(self, per_gpu_batchsize, dist=False):
        super().__init__()
        self.batch_size = per_gpu_batchsize
        self.dist = dist

    def setup(self, stage=None):
        self.train_dataset = PairDataset()
        # if self.dist:
        #     self.train_sampler = DistributedSampler(self.train_dataset, shuffle=True)
        self.train_sampler = None

    def train_dataloader(self):
        return DataLoader(self.train_dataset, batch_size=self.batch_size, sampler=self.train_sampler,
                          num_workers=8, shuffle=True)


class ITRModule(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.vision = nn.Sequential(nn.Conv2d(3, 64, 7, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.text = nn.EmbeddingBag(30000, 64)
        self.head = nn.Linear(128, 2)

    def training_step(self, batch, batch_idx):
        images, tokens = batch
        logits = self.head(torch.cat([self.vision(images), self.text(tokens)], dim=-1))
        return nn.functional.cross_entropy(logits, torch.zeros(len(images), dtype=torch.long, device=self.device))

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


def main(num_gpus=4, num_nodes=8):
    dm = MTDataModule(per_gpu_batchsize=64, dist=True)
    trainer = pl.Trainer(gpus=num_gpus, num_nodes=num_nodes, accelerator="ddp", precision=16,
                         replace_sampler_ddp=False, max_epochs=10)
    trainer.fit(ITRModule(), datamodule=dm)


if __name__ == "__main__":
    main()
