"""missing-set-epoch (session 5): how real code hands the DistributedSampler to the loader and where it calls
set_epoch.

* the sampler inside a batch sampler (``batch_sampler=BatchSampler(sampler, ...)``, a custom grouping class, a
  name bound to one): set_epoch must reach it; ``loader.sampler.set_epoch`` does not (the loader's ``.sampler``
  is then its default SequentialSampler, open-mmlab/mmcv#472), ``loader.batch_sampler.sampler.set_epoch``, the
  sampler's own name, or a batch sampler forwarding ``set_epoch`` do;
* the sampler given by position (``DataLoader(ds, 32, False, sampler)``);
* the script's own subclass of DistributedSampler: it still needs set_epoch when its order follows the epoch, not
  when its ``__iter__`` draws its own order;
* an endless generator over the loader (stylegan2-pytorch#199) is an epoch loop.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "missing-set-epoch"

BATCHED = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import BatchSampler, DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class GroupedBatchSampler(BatchSampler):
    def __init__(self, sampler, batch_size, groups):
        super().__init__(sampler, batch_size, drop_last=True)
        self.groups = groups


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dataset = TensorDataset(torch.randn(512, 8), torch.randint(0, 2, (512,)))
    sampler = DistributedSampler(dataset, shuffle=True)
{build}
    model = DistributedDataParallel(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
{epoch}
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''

BUILDS = [
    "    loader = DataLoader(dataset, batch_sampler=BatchSampler(sampler, 16, drop_last=True), num_workers=2)",
    "    loader = DataLoader(dataset, batch_sampler=GroupedBatchSampler(sampler, 16, None))",
    "    batches = GroupedBatchSampler(sampler, 16, None)\n    loader = DataLoader(dataset, batch_sampler=batches)",
]


PLAIN = "    loader = DataLoader(dataset, batch_size=16, sampler=sampler)"
BY_POSITION = "    loader = DataLoader(dataset, 16, False, sampler)"
REACHING = [
    "        sampler.set_epoch(epoch)",
    "        loader.batch_sampler.sampler.set_epoch(epoch)",
    "        loader.batch_sampler.set_epoch(epoch)",
]
SUBCLASS = '''

class {name}(DistributedSampler):
{body}
'''
FOLLOWING_THE_EPOCH = [
    "    pass",
    "    def __iter__(self):\n        g = torch.Generator()\n        g.manual_seed(self.seed + self.epoch)\n"
    "        return iter(torch.randperm(len(self.dataset), generator=g)[self.rank::self.num_replicas].tolist())",
    "    def __iter__(self):\n        return iter(list(super().__iter__())[::-1])",
]
OWN_FIXED_ORDER = ("    def __iter__(self):\n        g = torch.Generator()\n        g.manual_seed(0)\n"
                   "        return iter(torch.randperm(len(self.dataset), generator=g)[self.rank::self.num_replicas].tolist())")


def _subclassed(name: str, body: str) -> str:
    """The script with the script's own DistributedSampler subclass ``name`` as its sampler, no set_epoch."""
    code = BATCHED.format(build=PLAIN, epoch="        pass")
    code = code.replace("DistributedSampler(dataset, shuffle=True)", f"{name}(dataset, shuffle=True)")
    return code.replace("\n\ndef main():", SUBCLASS.format(name=name, body=body) + "\n\ndef main():")


# ``self.sampler = sampler`` ... ``self.sampler.set_epoch(epoch)`` (a trainer keeping the sampler): not a loader's
# default sampler
HELD_BY_AN_ATTRIBUTE = BATCHED.format(build=BUILDS[0], epoch="        holder.sampler.set_epoch(epoch)").replace(
    "    model = DistributedDataParallel(", "    holder = Holder(sampler)\n    model = DistributedDataParallel(").replace(
    "\n\ndef main():", "\n\nclass Holder:\n    def __init__(self, sampler):\n        self.sampler = sampler\n\n\ndef main():")

ENDLESS = '''
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils import data


def data_sampler(dataset, shuffle, distributed):
    if distributed:
        return data.distributed.DistributedSampler(dataset, shuffle=shuffle)
    return data.RandomSampler(dataset)


def sample_data(loader):
    while True:
        for batch in loader:
{inner}
            yield batch


def train(loader, model, optimizer, iters):
    loader = sample_data(loader)
    for idx in range(iters):
        loss = model(next(loader).cuda()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(local_rank):
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = torch.randn(1000, 8)
    model = nn.parallel.DistributedDataParallel(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    loader = data.DataLoader(dataset, batch_size=16, sampler=data_sampler(dataset, shuffle=True, distributed=True))
    train(loader, model, torch.optim.SGD(model.parameters(), lr=0.1), 10000)
'''




def _rows(name: str, codes: list, warns: bool) -> list:
    return [pytest.param(code, warns, id=f"{name}-{i}") for i, code in enumerate(codes)]


# A spelling of the script and whether missing-set-epoch must warn on it.
SPELLINGS = [
    # set_epoch on the loader's default sampler misses a batched sampler
    *_rows("loader-sampler-misses-batched", [BATCHED.format(build=build, epoch="        loader.sampler.set_epoch(epoch)")
                                             for build in BUILDS], True),
    *_rows("batched-without-set-epoch", [BATCHED.format(build=build, epoch="        pass") for build in BUILDS], True),
    # set_epoch that reaches a batched sampler (rows: reaching x build, as the two parametrize marks ran them)
    *_rows("reaches-batched", [BATCHED.format(build=build, epoch=epoch) for epoch in REACHING for build in BUILDS],
           False),
    pytest.param(BATCHED.format(build=PLAIN, epoch="        loader.sampler.set_epoch(epoch)"), False,
                 id="loader-sampler-reaches-plain"),
    pytest.param(BATCHED.format(build=BY_POSITION, epoch="        pass"), True, id="by-position"),
    pytest.param(BATCHED.format(build=BY_POSITION, epoch="        sampler.set_epoch(epoch)"), False,
                 id="by-position-fixed"),
    # the script's own subclass: needs set_epoch when its order follows the epoch, not when it draws its own
    *_rows("own-subclass-following-the-epoch", [_subclassed("RepeatSampler", body) for body in FOLLOWING_THE_EPOCH],
           True),
    pytest.param(_subclassed("FixedSampler", OWN_FIXED_ORDER), False, id="own-subclass-fixed-order"),
    pytest.param(HELD_BY_AN_ATTRIBUTE, False, id="held-by-an-attribute"),
    # an endless generator over the loader repeats the order
    pytest.param(ENDLESS.format(inner="            pass"), True, id="endless-generator"),
]


@pytest.mark.parametrize(("code", "warns"), SPELLINGS)
def test_each_spelling(tmp_path, code, warns):
    assert (ID in scan_ids(tmp_path, code)) is warns
