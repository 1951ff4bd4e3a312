"""collective-mismatch spellings (scan-recall7b, session 9): an early stop on this rank's own validation metric out of
an epoch loop whose optimizer steps sit in a local helper the loop calls (``train_one_epoch(...)``,
``self.fit_batch(batch)`` in an inner loop): the epoch loop is still the training loop, so the rank that stops leaves
the others in the next gradient all-reduce (speechbrain#1939's family). Near misses that stay quiet: the metric
all-reduced first, the decision broadcast, a stop on the epoch counter alone, and a loop that never trains (the helper
it calls only evaluates)."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "collective-mismatch"

SCRIPT = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        loss = F.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += F.cross_entropy(model(x.cuda()), y.cuda()).item()
    return total / len(loader)


class Stopper:
    def __init__(self, patience=5):
        self.best, self.bad, self.patience = None, 0, patience

    def should_stop(self, metric):
        if self.best is None or metric < self.best:
            self.best, self.bad = metric, 0
        else:
            self.bad += 1
        return self.bad >= self.patience


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(16, 4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_set = TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,)))
    val_set = TensorDataset(torch.randn(64, 16), torch.randint(0, 4, (64,)))
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=16, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=16, sampler=DistributedSampler(val_set, shuffle=False))
    stopper = Stopper()
    best, bad_epochs = float("inf"), 0
{body}
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


def _script(body: str) -> str:
    return SCRIPT.format(body="\n".join("    " + line if line else line for line in body.strip("\n").splitlines()))


WARN = {
    "helper_then_patience": '''
for epoch in range(100):
    sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)
    val_loss = evaluate(model, val_loader)
    if val_loss < best:
        best, bad_epochs = val_loss, 0
    else:
        bad_epochs += 1
    if bad_epochs >= 5:
        break
''',
    "helper_then_stopper_object": '''
for epoch in range(100):
    sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)
    if stopper.should_stop(evaluate(model, val_loader)):
        break
''',
    "helper_then_threshold": '''
epoch = 0
while epoch < 100:
    sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)
    epoch += 1
    if evaluate(model, val_loader) < 0.05:
        break
''',
}

QUIET = {
    "metric_all_reduced": '''
for epoch in range(100):
    sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)
    val = torch.tensor([evaluate(model, val_loader)], device="cuda")
    dist.all_reduce(val)
    if stopper.should_stop(val.item() / dist.get_world_size()):
        break
''',
    "decision_broadcast": '''
for epoch in range(100):
    sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)
    flag = [stopper.should_stop(evaluate(model, val_loader))]
    dist.broadcast_object_list(flag, src=0)
    if flag[0]:
        break
''',
    "epoch_counter_only": '''
for epoch in range(1000):
    sampler.set_epoch(epoch)
    train_one_epoch(model, loader, optimizer)
    if epoch >= 100:
        break
''',
    "loop_never_trains": '''
for epoch in range(3):
    if evaluate(model, val_loader) < 0.05:
        break
train_one_epoch(model, loader, optimizer)
''',
}


@pytest.mark.parametrize("name", sorted(WARN))
def test_early_stop_out_of_an_epoch_loop_training_through_a_helper_warns(tmp_path, name):
    assert ID in scan_ids(tmp_path, _script(WARN[name]))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_synchronised_or_non_training_stops_stay_quiet(tmp_path, name):
    assert ID not in scan_ids(tmp_path, _script(QUIET[name]))


# --- collectives known by the object or the function that runs them (patterns.yaml: synced_object_methods,
# framework_collective_functions, framework_collectives) ----------------------------------------------------------

OBJECTS = '''
import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.distributed.fsdp import FullStateDictConfig, FullyShardedDataParallel as FSDP, StateDictType
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP


def save(model, optimizer, rank):
{save}


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = {wrap}(nn.Linear(16, 4).cuda())
    optimizer = {optim}
    for step in range(10):
        loss = model(torch.randn(8, 16).cuda()).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    save(model, optimizer, dist.get_rank())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

ADAM = "torch.optim.AdamW(model.parameters())"
ZERO = "ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam, lr=0.01)"


def _objects(save: str, wrap: str = "FSDP", optim: str = ADAM) -> str:
    return OBJECTS.format(save="\n".join("    " + line for line in save.strip("\n").splitlines()), wrap=wrap,
                          optim=optim)


OBJECT_WARN = {
    "fsdp_state_dict_on_rank0": (_objects('''
if rank == 0:
    torch.save(model.state_dict(), "model.pt")
''')),
    "fsdp_full_state_dict_context_rank0_inside": (_objects('''
cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
    if rank == 0:
        torch.save(model.state_dict(), "model.pt")
''')),
    "fsdp_optim_state_dict_on_rank0": (_objects('''
if rank == 0:
    torch.save(FSDP.optim_state_dict(model, optimizer), "optim.pt")
''')),
    "dcp_save_on_rank0": (_objects('''
if rank == 0:
    dcp.save({"model": model.state_dict()}, checkpoint_id="ckpt")
''', wrap="DDP")),
    "zero_consolidate_on_rank0": (_objects('''
if rank == 0:
    optimizer.consolidate_state_dict(to=0)
    torch.save(optimizer.state_dict(), "optim.pt")
''', wrap="DDP", optim=ZERO)),
}

OBJECT_QUIET = {
    "fsdp_state_dict_on_every_rank": (_objects('''
cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
    state = model.state_dict()
if rank == 0:
    torch.save(state, "model.pt")
''')),
    "ddp_state_dict_on_rank0": (_objects('''
if rank == 0:
    torch.save(model.module.state_dict(), "model.pt")
''', wrap="DDP")),
    "dcp_save_on_every_rank": (_objects('''
dcp.save({"model": model.state_dict()}, checkpoint_id="ckpt")
''', wrap="DDP")),
    "zero_consolidate_on_every_rank": (_objects('''
optimizer.consolidate_state_dict(to=0)
if rank == 0:
    torch.save(optimizer.state_dict(), "optim.pt")
''', wrap="DDP", optim=ZERO)),
}


@pytest.mark.parametrize("name", sorted(OBJECT_WARN))
def test_fsdp_zero_and_dcp_collectives_on_rank0_warn(tmp_path, name):
    assert ID in scan_ids(tmp_path, OBJECT_WARN[name])


@pytest.mark.parametrize("name", sorted(OBJECT_QUIET))
def test_fsdp_zero_and_dcp_collectives_on_every_rank_stay_quiet(tmp_path, name):
    assert ID not in scan_ids(tmp_path, OBJECT_QUIET[name])


def test_state_dict_of_a_model_fsdp_or_ddp_by_configuration_stays_quiet(tmp_path):
    """open_lm: ``model = FSDP(...)`` on one path and ``DDP(model)`` on the other; the rank-0 ``model.state_dict()``
    sits in the non-FSDP arm: which wrapper runs is the configuration's, not a collective the file shows."""
    code = _objects('''
if rank == 0:
    torch.save(model.state_dict(), "model.pt")
''').replace("    model = FSDP(nn.Linear(16, 4).cuda())\n",
             "    if os.environ.get('USE_FSDP'):\n        model = FSDP(nn.Linear(16, 4).cuda())\n"
             "    else:\n        model = DDP(nn.Linear(16, 4).cuda(), device_ids=[local_rank])\n")
    assert ID not in scan_ids(tmp_path, code)


LIGHTNING_CALLBACK = '''
import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.utilities import rank_zero_only
from torch.utils.data import DataLoader, TensorDataset


class GatherPreds(Callback):
{decorator}    def on_validation_epoch_end(self, trainer, pl_module):
        preds = pl_module.all_gather(torch.stack(pl_module.val_preds))
        print(preds.shape)


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(16, 4)
        self.val_preds = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_preds.append(self.net(x).argmax(1).float().mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())


def main():
    data = TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,)))
    trainer = pl.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=3, callbacks=[GatherPreds()])
    trainer.fit(Model(), DataLoader(data, batch_size=16), DataLoader(data, batch_size=16))


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("decorator, warns", [("    @rank_zero_only\n", True), ("", False)])
def test_callback_all_gather_through_pl_module(tmp_path, decorator, warns):
    assert (ID in scan_ids(tmp_path, LIGHTNING_CALLBACK.format(decorator=decorator))) is warns
