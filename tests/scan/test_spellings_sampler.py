"""missing-distributed-sampler across the spellings real code uses: loaders and samplers of other libraries
(torchdata, PyG, MONAI, torchft), a framework told not to insert its sampler, a sampler attribute that is only
ever None; each with the near miss that must stay quiet."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "missing-distributed-sampler"

RAW = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
{imports}

dist.init_process_group("nccl")
rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(rank)
model = DDP(nn.Linear(8, 2).cuda(), device_ids=[rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = list(range(100))
{loader}
for epoch in range(3):
    for x in loader:
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
'''


@pytest.mark.parametrize("imports, loader", [
    ("from torchdata.stateful_dataloader import StatefulDataLoader",
     "loader = StatefulDataLoader(data, batch_size=8, shuffle=True, num_workers=2)"),
    ("from torch_geometric.loader import DataLoader", "loader = DataLoader(data, batch_size=8, shuffle=True)"),
    ("import monai", "loader = monai.data.DataLoader(data, batch_size=8, shuffle=True)"),
    ("from torch.utils.data import DataLoader, DistributedSampler\n",  # built but never handed to the loader
     "sampler = DistributedSampler(data)\nloader = DataLoader(data, batch_size=8, shuffle=True)"),
    ("from torch.utils.data import DataLoader", "sampler = None\nloader = DataLoader(data, batch_size=8, sampler=sampler)"),
])
def test_loader_without_a_sampler_in_any_library_spelling(tmp_path, imports, loader):
    assert ID in scan_ids(tmp_path, RAW.format(imports=imports, loader=loader))


@pytest.mark.parametrize("imports, loader", [
    ("from torchdata.stateful_dataloader import StatefulDataLoader\nfrom torch.utils.data import DistributedSampler",
     "loader = StatefulDataLoader(data, batch_size=8, sampler=DistributedSampler(data))"),
    ("import monai", "loader = monai.data.DataLoader(data, batch_size=8, sampler=monai.data.DistributedSampler(data))"),
    ("from torchft import DistributedSampler\nfrom torchdata.stateful_dataloader import StatefulDataLoader",
     "loader = StatefulDataLoader(data, batch_size=8, sampler=DistributedSampler(data, replica_group=0, "
     "num_replica_groups=2, rank=0, num_replicas=1))"),
    ("from torch.utils.data import DataLoader, DistributedSampler",  # None only off the distributed path
     "sampler = None\nif dist.is_initialized():\n    sampler = DistributedSampler(data)\n"
     "loader = DataLoader(data, batch_size=8, sampler=sampler)"),
])
def test_loader_with_a_library_distributed_sampler_is_quiet(tmp_path, imports, loader):
    assert ID not in scan_ids(tmp_path, RAW.format(imports=imports, loader=loader))


LIGHTNING = '''
import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader
{imports}


class DataModule(pl.LightningDataModule):
    def setup(self, stage=None):
        self.train_dataset = list(range(100))
        self.train_sampler = {sampler}

    def train_dataloader(self):
        return DataLoader(self.train_dataset, batch_size=8, sampler=self.train_sampler, shuffle={shuffle})


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.float().sum()


pl.Trainer(accelerator="gpu", devices=4, strategy="ddp"{options}).fit(Model(), datamodule=DataModule())
'''


@pytest.mark.parametrize("options", [", replace_sampler_ddp=False", ", use_distributed_sampler=False"])
def test_framework_told_not_to_insert_its_sampler(tmp_path, options):
    code = LIGHTNING.format(imports="", sampler="None", shuffle="True", options=options)
    assert ID in scan_ids(tmp_path, code)


@pytest.mark.parametrize("imports, sampler, options", [
    ("", "None", ""),  # Lightning inserts its DistributedSampler
    ("", "None", ", use_distributed_sampler=True"),
    ("from torch.utils.data import DistributedSampler", "DistributedSampler(self.train_dataset)",
     ", use_distributed_sampler=False"),  # the script brings its own
])
def test_framework_sampler_near_misses(tmp_path, imports, sampler, options):
    code = LIGHTNING.format(imports=imports, sampler=sampler, shuffle="sampler is None" if "Dist" in sampler else "True",
                            options=options)
    assert ID not in scan_ids(tmp_path, code)


ACCELERATOR = '''
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler


class Accelerator:
    def __init__(self):
        dist.init_process_group("nccl")
        self.rank = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(self.rank)

    def prepare(self, *objs):
        out = []
        for obj in objs:
            if isinstance(obj, torch.nn.Module):
                obj = DistributedDataParallel(obj.cuda(), device_ids=[self.rank])
{loader_branch}
            out.append(obj)
        return out
'''

TRAIN = '''
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from myacc import Accelerator



def main():
    accelerator = Accelerator()
    model = nn.Linear(10, 2)
    optimizer = torch.optim.AdamW(model.parameters())
    loader = DataLoader(TensorDataset(torch.randn(100, 10)), batch_size=8, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(3):
        for (x,) in loader:
            optimizer.zero_grad()
            model(x.cuda()).sum().backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''

SHARDS = ('            elif isinstance(obj, DataLoader):\n'
          '                obj = DataLoader(obj.dataset, batch_size=obj.batch_size, sampler=DistributedSampler(obj.dataset))')


@pytest.mark.parametrize("loader_branch, found", [
    ("            pass", True),  # the hand-written prepare() only wraps the model: the loader comes back unsharded
    (SHARDS, False),  # it rebuilds the loader with a DistributedSampler
])
def test_hand_written_accelerator_in_a_local_module(tmp_path, loader_branch, found):
    from troubleshooter.scan import scan_paths

    (tmp_path / "myacc.py").write_text(ACCELERATOR.format(loader_branch=loader_branch), encoding="utf-8")
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    for paths in ([str(tmp_path / "train.py")], [str(tmp_path)]):
        assert (ID in scan_paths(paths).hits) is found


@pytest.mark.parametrize("loader, found", [
    ("loader = DataLoader(data, 8, True)", True),  # shuffle given by position, no sampler
    ("loader = DataLoader(data, 8, False, DistributedSampler(data))", False),  # sampler by position
    ("loader = DataLoader(data, 8, False, None, BatchSampler(DistributedSampler(data), 8, False))", False),
])
def test_positional_arguments_of_torch_dataloader(tmp_path, loader, found):
    imports = "from torch.utils.data import BatchSampler, DataLoader, DistributedSampler"
    assert (ID in scan_ids(tmp_path, RAW.format(imports=imports, loader=loader))) is found
