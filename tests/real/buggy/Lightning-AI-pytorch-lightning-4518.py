# expect:
# source: https://github.com/Lightning-AI/pytorch-lightning/issues/4518
# reason: Any Lightning example froze under DDP on 4 GPUs inside a Docker container on AWS; the fix was export NCCL_SOCKET_IFNAME=lo (a network setting) and the issue was closed as working as intended: the training script itself is fine.
from argparse import ArgumentParser

import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, random_split


class Backbone(torch.nn.Module):
    def __init__(self, hidden_dim=128):
        super().__init__()
        self.l1 = torch.nn.Linear(28 * 28, hidden_dim)
        self.l2 = torch.nn.Linear(hidden_dim, 10)

    def forward(self, x):
        x = x.view(x.size(0), -1)
        return self.l2(torch.relu(self.l1(x)))


class LitClassifier(pl.LightningModule):
    def __init__(self, backbone, learning_rate=1e-3):
        super().__init__()
        self.save_hyperparameters(ignore=["backbone"])
        self.backbone = backbone

    def forward(self, x):
        return self.backbone(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("valid_loss", F.cross_entropy(self(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.learning_rate)


def cli_main():
    pl.seed_everything(1234)
    parser = ArgumentParser()
    parser.add_argument("--batch_size", default=32, type=int)
    parser.add_argument("--hidden_dim", type=int, default=128)
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--max_epochs", type=int, default=5)
    args = parser.parse_args()

    full = TensorDataset(torch.rand(60000, 1, 28, 28), torch.randint(0, 10, (60000,)))
    mnist_train, mnist_val = random_split(full, [55000, 5000], generator=torch.Generator().manual_seed(0))
    train_loader = DataLoader(mnist_train, batch_size=args.batch_size, shuffle=True, num_workers=4)
    val_loader = DataLoader(mnist_val, batch_size=args.batch_size, num_workers=4)

    model = LitClassifier(Backbone(hidden_dim=args.hidden_dim))
    trainer = pl.Trainer(accelerator="gpu", devices=args.gpus, strategy="ddp", max_epochs=args.max_epochs)
    trainer.fit(model, train_loader, val_loader)


if __name__ == "__main__":
    cli_main()
