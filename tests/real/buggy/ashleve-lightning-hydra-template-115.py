# expect: logging-from-all-ranks
# source: https://github.com/ashleve/lightning-hydra-template/issues/115
# reason: With the Lightning "ddp" accelerator the script is re-executed once per GPU, and the template's helpers (the config tree printout, the python logger's "Instantiating ..." lines, the hyperparameter dump) ran unguarded in every process, so the console and the log file repeated every line once per GPU; the maintainers pointed to rank_zero_only and the template's utils were decorated with it.
import logging
from typing import Any, Dict

import pytorch_lightning as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger(__name__)

CONFIG: Dict[str, Any] = {
    "seed": 12345,
    "trainer": {"accelerator": "gpu", "devices": 4, "strategy": "ddp", "max_epochs": 10},
    "model": {"hidden": 128, "lr": 1e-3},
    "datamodule": {"batch_size": 64, "num_samples": 8192},
    "print_config": True,
}


def print_config(config: Dict[str, Any], prefix: str = "") -> None:
    for key, value in config.items():
        if isinstance(value, dict):
            print(f"{prefix}{key}:")
            print_config(value, prefix + "    ")
        else:
            print(f"{prefix}{key}: {value}")


def extras(config: Dict[str, Any]) -> None:
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s][%(name)s] %(message)s")
    if config.get("print_config"):
        log.info("Printing config tree")
        print_config(config)


def log_hyperparameters(config: Dict[str, Any], model: pl.LightningModule) -> None:
    total = sum(p.numel() for p in model.parameters())
    log.info("model/params_total=%d trainer=%s", total, config["trainer"])


class LitClassifier(pl.LightningModule):
    def __init__(self, hidden: int, lr: float):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(32, hidden), nn.ReLU(), nn.Linear(hidden, 10))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train/loss", loss, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


class RandomDataModule(pl.LightningDataModule):
    def __init__(self, batch_size: int, num_samples: int):
        super().__init__()
        self.batch_size = batch_size
        self.num_samples = num_samples

    def setup(self, stage=None):
        self.train_set = TensorDataset(torch.randn(self.num_samples, 32), torch.randint(0, 10, (self.num_samples,)))

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True, num_workers=2)


def train(config: Dict[str, Any]) -> None:
    pl.seed_everything(config["seed"])
    log.info("Instantiating datamodule <RandomDataModule>")
    datamodule = RandomDataModule(**config["datamodule"])
    log.info("Instantiating model <LitClassifier>")
    model = LitClassifier(**config["model"])
    log.info("Instantiating trainer")
    trainer = pl.Trainer(**config["trainer"])
    log_hyperparameters(config, model)
    log.info("Starting training!")
    trainer.fit(model, datamodule=datamodule)


if __name__ == "__main__":
    extras(CONFIG)
    train(CONFIG)
