# expect: checkpoint-without-module
# source: https://github.com/microsoft/InnerEye-DeepLearning/pull/623
# reason: The self-supervised online-evaluator callback wraps its linear head in DistributedDataParallel when training runs under DDP and returns `self.evaluator.state_dict()` (the wrapper's, keys prefixed `module.`) from on_save_checkpoint; on resume, on_load_checkpoint runs before the head is wrapped again, so the prefixed keys no longer match (and checkpoints depend on whether DDP was used); the merged fix saves and loads the unwrapped module.
from typing import Any, Dict

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from pytorch_lightning.callbacks import Callback
from torch.nn import SyncBatchNorm
from torch.nn.parallel import DistributedDataParallel


class LinearHead(nn.Module):
    def __init__(self, n_input, n_classes, n_hidden=None, p=0.1):
        super().__init__()
        if n_hidden is None:
            self.block = nn.Sequential(nn.Flatten(), nn.Dropout(p), nn.Linear(n_input, n_classes))
        else:
            self.block = nn.Sequential(nn.Flatten(), nn.Dropout(p), nn.Linear(n_input, n_hidden),
                                       nn.BatchNorm1d(n_hidden), nn.ReLU(inplace=True), nn.Dropout(p),
                                       nn.Linear(n_hidden, n_classes))

    def forward(self, x):
        return self.block(x)


class OnlineLinearEvaluator(Callback):
    OPTIMIZER_STATE_NAME = "evaluator_optimizer"
    EVALUATOR_STATE_NAME = "evaluator_weights"

    def __init__(self, z_dim, num_classes, learning_rate=1e-4, hidden_dim=None, drop_p=0.2):
        super().__init__()
        self.evaluator = LinearHead(z_dim, num_classes, n_hidden=hidden_dim, p=drop_p)
        self.optimizer = torch.optim.Adam(self.evaluator.parameters(), lr=learning_rate, weight_decay=1e-4)

    def on_save_checkpoint(self, trainer, pl_module, checkpoint: Dict[str, Any]) -> Dict[str, Any]:
        return {
            self.OPTIMIZER_STATE_NAME: self.optimizer.state_dict(),
            self.EVALUATOR_STATE_NAME: self.evaluator.state_dict(),
        }

    def on_load_checkpoint(self, trainer, pl_module, callback_state: Dict[str, Any]) -> None:
        self.optimizer.load_state_dict(callback_state[self.OPTIMIZER_STATE_NAME])
        # called before on_fit_start wraps the evaluator again
        self.evaluator.load_state_dict(callback_state[self.EVALUATOR_STATE_NAME])

    def on_fit_start(self, trainer, pl_module) -> None:
        self.evaluator.to(pl_module.device)
        if trainer.world_size > 1:
            self.evaluator = SyncBatchNorm.convert_sync_batchnorm(self.evaluator)
            self.evaluator = DistributedDataParallel(self.evaluator, device_ids=[pl_module.device])

    def shared_step(self, batch, pl_module):
        x, y = batch
        x, y = x.to(pl_module.device), y.to(pl_module.device)
        with torch.no_grad():
            representations = pl_module.encode(x).detach()
        logits = self.evaluator(representations)
        return F.cross_entropy(logits, y), logits, y

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        loss, _, _ = self.shared_step(batch, pl_module)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        pl_module.log("online_evaluator/train_loss", loss, on_step=False, on_epoch=True, sync_dist=True)

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0) -> None:
        self.evaluator.eval()
        with torch.no_grad():
            loss, logits, y = self.shared_step(batch, pl_module)
        self.evaluator.train()
        acc = (logits.argmax(-1) == y).float().mean()
        pl_module.log("online_evaluator/val_loss", loss, on_step=False, on_epoch=True, sync_dist=True)
        pl_module.log("online_evaluator/val_acc", acc, on_step=False, on_epoch=True, sync_dist=True)


class SimCLRModule(pl.LightningModule):
    def __init__(self, z_dim=512, temperature=0.1, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(),
                                     nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, z_dim))
        self.projector = nn.Sequential(nn.Linear(z_dim, z_dim), nn.ReLU(), nn.Linear(z_dim, 128))

    def encode(self, x):
        return self.encoder(x)

    def training_step(self, batch, batch_idx):
        x, _ = batch
        z1 = F.normalize(self.projector(self.encoder(x + 0.1 * torch.randn_like(x))), dim=-1)
        z2 = F.normalize(self.projector(self.encoder(x.flip(-1))), dim=-1)
        logits = z1 @ z2.t() / self.hparams.temperature
        loss = F.cross_entropy(logits, torch.arange(len(x), device=self.device))
        self.log("train/loss", loss, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        return None

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def main(train_loader, val_loader, resume_from=None):
    trainer = pl.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=200,
                         callbacks=[OnlineLinearEvaluator(z_dim=512, num_classes=2, hidden_dim=None)])
    trainer.fit(SimCLRModule(), train_loader, val_loader, ckpt_path=resume_from)


if __name__ == "__main__":
    import torchvision
    from torch.utils.data import DataLoader
    from torchvision import transforms

    data = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=transforms.ToTensor())
    val = torchvision.datasets.CIFAR10("data", train=False, download=True, transform=transforms.ToTensor())
    main(DataLoader(data, batch_size=256, shuffle=True, num_workers=8, drop_last=True),
         DataLoader(val, batch_size=256, num_workers=8))
