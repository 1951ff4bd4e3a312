"""collective-mismatch spellings (scan-recall7b): Lightning's ``self.log`` / ``self.log_dict`` (a callback's
``pl_module.log``) called on some ranks only, synced (``sync_dist=True``) or in a validation/test epoch-end hook whose
metrics checkpoint / early-stopping callbacks monitor, without ``rank_zero_only=True`` (modelforge#313: epoch time
logged under ``if self.global_rank == 0:`` froze training). The rank test spelled several ways (an attribute of the
module, of the trainer, a decorator, a callback's trainer argument). Near misses that stay quiet: rank_zero_only=True,
a per-step log without sync_dist, every rank logging, both arms logging, and a ``log`` method of a class that is not
Lightning's."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "collective-mismatch"

MODULE = '''
import time

import {package} as L
import torch
import torch.nn as nn
from {package}.pytorch.utilities import rank_zero_only
from torch.utils.data import DataLoader, TensorDataset


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(16, 1)
        self.started = 0.0

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_err = nn.functional.l1_loss(self(x), y)

{hook}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main():
    data = DataLoader(TensorDataset(torch.randn(256, 16), torch.randn(256)), batch_size=32)
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=3)
    trainer.fit(Regressor(), data, data)


if __name__ == "__main__":
    main()
'''


def hook(body: str) -> str:
    return "\n".join("    " + line if line else line for line in body.strip("\n").splitlines())


POSITIVE = {
    "global-rank-sync-dist": '''
def on_train_epoch_end(self):
    if self.global_rank == 0:
        self.log("epoch_time", time.time() - self.started, sync_dist=True)
''',
    "trainer-is-global-zero-validation-hook": '''
def on_validation_epoch_end(self):
    if self.trainer.is_global_zero:
        self.log("val_err", self.val_err)
''',
    "rank-zero-only-decorator": '''
@rank_zero_only
def on_validation_epoch_end(self):
    self.log("val_err", self.val_err, prog_bar=True)
''',
    "local-rank-log-dict": '''
def on_train_epoch_end(self):
    metrics = {"epoch_time": time.time() - self.started}
    if self.local_rank == 0:
        self.log_dict(metrics, sync_dist=True)
''',
    "early-return-non-zero": '''
def validation_epoch_end(self, outputs):
    if self.global_rank != 0:
        return
    self.log("val_err", torch.stack(outputs).mean())
''',
}

QUIET = {
    "rank-zero-only-keyword": '''
def on_validation_epoch_end(self):
    if self.trainer.is_global_zero:
        self.log("val_err", self.val_err, rank_zero_only=True)
''',
    "per-step-log-without-sync": '''
def on_train_batch_end(self, outputs, batch, batch_idx):
    if self.global_rank == 0:
        self.log("step_time", time.time() - self.started, on_step=True)
''',
    "every-rank-logs": '''
def on_validation_epoch_end(self):
    self.log("val_err", self.val_err, sync_dist=True)
''',
    "both-arms-log": '''
def on_validation_epoch_end(self):
    if self.trainer.is_global_zero:
        self.log("val_err", self.val_err, sync_dist=True)
    else:
        self.log("val_err", self.val_err, sync_dist=True)
''',
}


@pytest.mark.parametrize("package", ["lightning", "pytorch_lightning"])
@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_lightning_log_on_some_ranks(tmp_path, name, package):
    code = MODULE.format(package=package, hook=hook(POSITIVE[name]))
    if package == "pytorch_lightning":
        code = code.replace("pytorch_lightning.pytorch.utilities", "pytorch_lightning.utilities")
    assert ID in scan_ids(tmp_path, code)


@pytest.mark.parametrize("name", sorted(QUIET))
def test_lightning_log_quiet(tmp_path, name):
    assert ID not in scan_ids(tmp_path, MODULE.format(package="lightning", hook=hook(QUIET[name])))


CALLBACK = '''
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        return self.net(batch).sum()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class ReportCallback(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        score = trainer.callback_metrics.get("val_err", torch.tensor(0.0))
        if trainer.is_global_zero:
            pl_module.log("val_score", score{extra})


if __name__ == "__main__":
    loader = DataLoader(torch.randn(64, 4), batch_size=8)
    pl.Trainer(devices=2, strategy="ddp", callbacks=[ReportCallback()]).fit(Model(), loader)
'''


def test_callback_pl_module_log_on_rank_zero(tmp_path):
    assert ID in scan_ids(tmp_path, CALLBACK.format(extra=""))
    assert ID not in scan_ids(tmp_path, CALLBACK.format(extra=", rank_zero_only=True"))


NOT_LIGHTNING = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model):
        self.model = model
        self.rank = dist.get_rank()

    def log(self, name, value, sync_dist=False):
        print(name, value)

    def on_validation_epoch_end(self, err):
        if self.rank == 0:
            self.log("val_err", err, sync_dist=True)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(nn.Linear(4, 1).cuda(local_rank), device_ids=[local_rank])
    Trainer(model).on_validation_epoch_end(0.1)


if __name__ == "__main__":
    main()
'''


def test_log_method_of_a_plain_class_is_not_lightning(tmp_path):
    assert ID not in scan_ids(tmp_path, NOT_LIGHTNING)


# Reading an attribute whose getter runs a collective (collective_attributes: Lightning's Trainer.log_dir broadcasts
# rank 0's directory) on rank 0 only: lightning#18148's @rank_zero_only hook, a rank test in a hook or a callback.
LOG_DIR = '''
import os

import lightning.pytorch as pl
import torch
from lightning.pytorch.utilities import rank_zero_only
from torch.utils.data import DataLoader


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch).sum()

{hook}

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    loader = DataLoader(torch.randn(64, 8), batch_size=8)
    pl.Trainer(devices=2, strategy="ddp").fit(Model(), loader)
'''

LOG_DIR_POSITIVE = {
    "rank-zero-only-hook": '''
@rank_zero_only
def on_fit_start(self):
    os.makedirs(os.path.join(self.trainer.log_dir, "samples"), exist_ok=True)
''',
    "is-global-zero-block": '''
def on_train_start(self):
    if self.trainer.is_global_zero:
        print("logs in", self.trainer.log_dir)
''',
    "global-rank-early-return": '''
def on_train_epoch_end(self):
    if self.global_rank != 0:
        return
    if True:
        torch.save(self.state_dict(), os.path.join(self.trainer.log_dir, "last.pt"))
''',
}

LOG_DIR_QUIET = {
    "read-on-every-rank-first": '''
def on_fit_start(self):
    run_dir = self.trainer.log_dir
    if self.trainer.is_global_zero:
        os.makedirs(run_dir, exist_ok=True)
''',
    "logger-log-dir": '''
@rank_zero_only
def on_fit_start(self):
    os.makedirs(self.trainer.logger.log_dir, exist_ok=True)
''',
}


@pytest.mark.parametrize("name", sorted(LOG_DIR_POSITIVE))
def test_broadcasting_attribute_read_on_rank_zero(tmp_path, name):
    assert ID in scan_ids(tmp_path, LOG_DIR.format(hook=hook(LOG_DIR_POSITIVE[name])))


@pytest.mark.parametrize("name", sorted(LOG_DIR_QUIET))
def test_broadcasting_attribute_quiet(tmp_path, name):
    assert ID not in scan_ids(tmp_path, LOG_DIR.format(hook=hook(LOG_DIR_QUIET[name])))
