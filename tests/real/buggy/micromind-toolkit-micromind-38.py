# expect: logging-from-all-ranks
# source: https://github.com/micromind-toolkit/micromind/issues/38
# reason: The MicroMind base class trains through Accelerate, and at the end of every epoch it handed itself to the Checkpointer on every process: each rank wrote the same checkpoint files and metric log into the experiment folder and deleted the older checkpoints, racing the others; the maintainers' fix (29560c2) calls the checkpointer from the main process only.
import os
from datetime import datetime

import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


class Checkpointer:
    def __init__(self, experiment_folder, key="loss", mode="min", keep=3):
        self.root = os.path.join(experiment_folder, "save")
        os.makedirs(self.root, exist_ok=True)
        self.key, self.mode, self.keep = key, mode, keep
        self.saved = []
        self.best = float("inf") if mode == "min" else -float("inf")

    def __call__(self, mind, epoch, train_metrics, metrics):
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        with open(os.path.join(self.root, "train_log.txt"), "a") as log:
            log.write(f"{stamp} epoch {epoch}: train {train_metrics} val {metrics}\n")
        path = os.path.join(self.root, f"epoch_{epoch}_{self.key}_{metrics[self.key]:.4f}.ckpt")
        state = {name: module.state_dict() for name, module in mind.modules.items()}
        state["opt"] = mind.opt.state_dict()
        torch.save(state, path)
        self.saved.append(path)
        if len(self.saved) > self.keep:
            os.remove(self.saved.pop(0))
        better = metrics[self.key] < self.best if self.mode == "min" else metrics[self.key] > self.best
        if better:
            self.best = metrics[self.key]
            torch.save(state, os.path.join(self.root, "best.ckpt"))


class MicroMind:
    def __init__(self, hparams):
        self.hparams = hparams
        self.accelerator = Accelerator()
        self.device = self.accelerator.device
        self.modules = nn.ModuleDict()

    def forward(self, batch):
        raise NotImplementedError

    def compute_loss(self, pred, batch):
        raise NotImplementedError

    def configure_optimizers(self):
        return torch.optim.Adam(self.modules.parameters(), lr=self.hparams["lr"])

    def train(self, epochs, datasets, checkpointer=None):
        self.opt = self.configure_optimizers()
        train_loader, val_loader = datasets["train"], datasets["val"]
        self.modules, self.opt, train_loader, val_loader = self.accelerator.prepare(
            self.modules, self.opt, train_loader, val_loader)
        for epoch in range(epochs):
            self.modules.train()
            running = 0.0
            for batch in train_loader:
                self.opt.zero_grad()
                loss = self.compute_loss(self.forward(batch), batch)
                self.accelerator.backward(loss)
                self.opt.step()
                running += loss.item()
            train_metrics = {"loss": running / len(train_loader)}
            metrics = self.validate(val_loader)
            if checkpointer is not None:
                checkpointer(self, epoch, train_metrics, metrics)
        self.accelerator.wait_for_everyone()

    @torch.no_grad()
    def validate(self, loader):
        self.modules.eval()
        total = 0.0
        for batch in loader:
            total += self.compute_loss(self.forward(batch), batch).item()
        return {"loss": total / len(loader)}


class ImageClassification(MicroMind):
    def __init__(self, hparams):
        super().__init__(hparams)
        self.modules["classifier"] = nn.Sequential(
            nn.Conv2d(3, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))

    def forward(self, batch):
        return self.modules["classifier"](batch[0])

    def compute_loss(self, pred, batch):
        return nn.functional.cross_entropy(pred, batch[1])


if __name__ == "__main__":
    hparams = {"lr": 1e-3, "batch_size": 64, "epochs": 20, "experiment_folder": "results/cifar"}
    data = TensorDataset(torch.randn(4096, 3, 32, 32), torch.randint(0, 10, (4096,)))
    val = TensorDataset(torch.randn(512, 3, 32, 32), torch.randint(0, 10, (512,)))
    datasets = {"train": DataLoader(data, batch_size=hparams["batch_size"], shuffle=True),
                "val": DataLoader(val, batch_size=hparams["batch_size"])}
    mind = ImageClassification(hparams)
    checkpointer = Checkpointer(hparams["experiment_folder"], key="loss")
    mind.train(epochs=hparams["epochs"], datasets=datasets, checkpointer=checkpointer)
