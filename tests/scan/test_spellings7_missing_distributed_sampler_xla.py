"""missing-distributed-sampler (session 9): torch_xla's process world, and loaders reached through a device wrapper.

``xmp.spawn`` / ``torch_xla.launch`` start one process per TPU core or XLA device (frameworks.yaml ``torch-xla``);
``MpDeviceLoader`` / ``ParallelLoader`` only move each process's own batches onto its device, so a DataLoader without
a DistributedSampler is read in full by every core (pytorch/xla#997, #7904). A loader counts as training when a
name bound to a call that takes it first (``device_loader = MpDeviceLoader(loader, device)``, ``DataPrefetcher(loader)``)
is iterated by a loop that steps; ``len(loader)`` only measures it (``loader_measures``).
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "missing-distributed-sampler"

XLA = '''
import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
{spawner_import}
from torch.utils.data import DataLoader, TensorDataset
{sampler_import}


def {fn}(index):
    device = xm.xla_device()
    data = TensorDataset(torch.randn(512, 8), torch.randint(0, 2, (512,)))
{loader}
    model = nn.Linear(8, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
{epoch_body}


if __name__ == "__main__":
    {spawn}
'''

PLAIN_LOADER = "    loader = DataLoader(data, batch_size=32)"
SHUFFLED_LOADER = "    train_loader = DataLoader(data, batch_size=32, shuffle=True)"
SHARDED_LOADER = ("    sampler = DistributedSampler(data, num_replicas=xr.world_size(), rank=xr.global_ordinal())\n"
                  "    loader = DataLoader(data, batch_size=32, sampler=sampler)")
SAMPLER_IMPORT = "from torch.utils.data.distributed import DistributedSampler\nfrom torch_xla import runtime as xr"

MP_DEVICE_LOOP = '''        device_loader = pl.MpDeviceLoader(loader, device)
        for x, y in device_loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            xm.optimizer_step(optimizer)'''
PER_DEVICE_LOOP = '''        for x, y in pl.ParallelLoader(train_loader, [device]).per_device_loader(device):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            xm.optimizer_step(optimizer)'''
CHAINED_LOOP = '''        batches = pl.ParallelLoader(loader, [device]).per_device_loader(device)
        for x, y in batches:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            xm.optimizer_step(optimizer)'''
EVAL_LOOP = '''        device_loader = pl.MpDeviceLoader(loader, device)
        with torch.no_grad():
            for x, y in device_loader:
                print(model(x).argmax(1).eq(y).sum())'''

SPAWNERS = {
    "xmp.spawn": ("import torch_xla.distributed.xla_multiprocessing as xmp", "xmp.spawn(_mp_fn, args=())"),
    "torch_xla.launch": ("import torch_xla", "torch_xla.launch(_mp_fn, args=())"),
}


def xla_script(spawner="xmp.spawn", loader=PLAIN_LOADER, body=MP_DEVICE_LOOP, sampler_import=""):
    spawner_import, spawn = SPAWNERS[spawner]
    return XLA.format(spawner_import=spawner_import, sampler_import=sampler_import, fn="_mp_fn", loader=loader,
                      epoch_body=body, spawn=spawn)


@pytest.mark.parametrize("spawner", sorted(SPAWNERS))
@pytest.mark.parametrize("loader,body", [(PLAIN_LOADER, MP_DEVICE_LOOP), (SHUFFLED_LOADER, PER_DEVICE_LOOP),
                                         (PLAIN_LOADER, CHAINED_LOOP)],
                         ids=["mp_device_loader", "per_device_loader_inline", "per_device_loader_bound"])
def test_xla_processes_without_a_sampler_each_read_everything(tmp_path, spawner, loader, body):
    assert ID in scan_ids(tmp_path, xla_script(spawner, loader, body))


@pytest.mark.parametrize("spawner", sorted(SPAWNERS))
def test_xla_with_a_distributed_sampler_is_quiet(tmp_path, spawner):
    script = xla_script(spawner, SHARDED_LOADER, MP_DEVICE_LOOP, SAMPLER_IMPORT)
    assert ID not in scan_ids(tmp_path, script)


def test_xla_evaluation_loader_is_quiet(tmp_path):
    assert ID not in scan_ids(tmp_path, xla_script(body=EVAL_LOOP))


def test_one_xla_device_without_processes_is_quiet(tmp_path):
    script = xla_script().replace("xmp.spawn(_mp_fn, args=())", "_mp_fn(0)")
    assert ID not in scan_ids(tmp_path, script)


DDP = '''
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset


class DataPrefetcher:
    def __init__(self, loader):
        self.loader = loader

    def __iter__(self):
        for x, y in self.loader:
            yield x.cuda(non_blocking=True), y.cuda(non_blocking=True)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    loader = DataLoader(TensorDataset(torch.randn(512, 8), torch.randint(0, 2, (512,))), batch_size=32)
    model = DistributedDataParallel(torch.nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
{body}


if __name__ == "__main__":
    main()
'''

PREFETCHED = '''    prefetcher = DataPrefetcher(loader)
    for epoch in range(3):
        for x, y in prefetcher:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()'''
MEASURED_ONLY = '''    steps = len(loader)
    for step in range(steps):
        x, y = torch.randn(32, 8).cuda(), torch.randint(0, 2, (32,)).cuda()
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()'''


def test_ddp_loader_read_through_a_prefetcher_trains(tmp_path):
    assert ID in scan_ids(tmp_path, DDP.format(body=PREFETCHED))


def test_a_loader_only_measured_is_not_a_training_loader(tmp_path):
    assert ID not in scan_ids(tmp_path, DDP.format(body=MEASURED_ONLY))
