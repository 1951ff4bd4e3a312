# expect:
# seen-in: https://github.com/Lightning-AI/pytorch-lightning/blob/7f0c3436cd3f6ad3753125672024fc415cbcb414/examples/pytorch/domain_templates/imagenet.py
# A Lightning entry point: the Trainer's DDP strategy owns the process group, the samplers and rank-zero logging.
import lightning as L
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class ImageNetLightningModel(L.LightningModule):
    def __init__(self, lr=0.1):
        super().__init__()
        self.save_hyperparameters()
        self.model = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                   nn.Flatten(), nn.Linear(64, 1000))

    def training_step(self, batch, batch_idx):
        images, target = batch
        loss = nn.functional.cross_entropy(self.model(images), target)
        self.log("train_loss", loss, on_step=True, on_epoch=True, prog_bar=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)

    def train_dataloader(self):
        data = TensorDataset(torch.randn(5000, 3, 224, 224), torch.randint(0, 1000, (5000,)))
        return DataLoader(data, batch_size=32, shuffle=True, num_workers=4)


def main():
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=90, sync_batchnorm=True)
    trainer.fit(ImageNetLightningModel())


if __name__ == "__main__":
    main()
