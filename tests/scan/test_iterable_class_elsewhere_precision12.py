"""A dataset class from another module of the project that is iterable-style (based on ``IterableDataset``, however
spelled) yields its own data: a sampler cannot be given to it, so its loader is not missing one - like the same class
defined in the script. A map-style class from that module still warns. (Pretraining scripts keep their streaming
dataset in ``data.py``: GaLore's ``PreprocessedIterableDataset``, OpenVLA's ``RLDSDataset``.)"""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

DATA = '''import torch
{imports}


class TokenStream({base}):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(8)

    def __iter__(self):
        for i in range(self.n):
            yield self[i]
'''
TRAIN = '''import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

{imports}


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    stream = {build}
    train_loader = DataLoader(stream, batch_size=16)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in train_loader:
        loss = model(x.cuda()).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
'''
BASES = {
    "IterableDataset": ("from torch.utils.data import IterableDataset", "IterableDataset", False),
    "torch.utils.data.IterableDataset": ("", "torch.utils.data.IterableDataset", False),
    "aliased module": ("from torch.utils import data as tud", "tud.IterableDataset", False),
    "map-style Dataset": ("from torch.utils.data import Dataset", "Dataset", True),
}
IMPORTS = {
    "from data import": ("from data import TokenStream", "TokenStream(1000)"),
    "import data": ("import data", "data.TokenStream(1000)"),
}


@pytest.mark.parametrize("imports, build", IMPORTS.values(), ids=IMPORTS.keys())
@pytest.mark.parametrize("data_imports, base, warns", BASES.values(), ids=BASES.keys())
def test_an_iterable_class_of_another_module_yields_its_own_data(tmp_path, imports, build, data_imports, base, warns):
    code = TRAIN.format(imports=imports, build=build)
    data = DATA.format(imports=data_imports, base=base)
    assert shows(tmp_path, "missing-distributed-sampler", code, data=data) is warns
