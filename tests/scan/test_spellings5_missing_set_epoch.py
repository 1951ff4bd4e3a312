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


@pytest.mark.parametrize("build", BUILDS)
def test_set_epoch_on_the_loaders_default_sampler_misses_a_batched_sampler(tmp_path, build):
    code = BATCHED.format(build=build, epoch="        loader.sampler.set_epoch(epoch)")
    assert ID in scan_ids(tmp_path, code)


@pytest.mark.parametrize("build", BUILDS)
def test_batched_sampler_without_any_set_epoch(tmp_path, build):
    assert ID in scan_ids(tmp_path, BATCHED.format(build=build, epoch="        pass"))


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("epoch", [
    "        sampler.set_epoch(epoch)",
    "        loader.batch_sampler.sampler.set_epoch(epoch)",
    "        loader.batch_sampler.set_epoch(epoch)",
])
def test_set_epoch_that_reaches_a_batched_sampler_stays_quiet(tmp_path, build, epoch):
    assert ID not in scan_ids(tmp_path, BATCHED.format(build=build, epoch=epoch))


def test_loader_sampler_set_epoch_still_reaches_a_plain_sampler(tmp_path):
    code = BATCHED.format(build="    loader = DataLoader(dataset, batch_size=16, sampler=sampler)",
                          epoch="        loader.sampler.set_epoch(epoch)")
    assert ID not in scan_ids(tmp_path, code)


def test_sampler_given_by_position(tmp_path):
    code = BATCHED.format(build="    loader = DataLoader(dataset, 16, False, sampler)", epoch="        pass")
    assert ID in scan_ids(tmp_path, code)
    fixed = BATCHED.format(build="    loader = DataLoader(dataset, 16, False, sampler)",
                           epoch="        sampler.set_epoch(epoch)")
    assert ID not in scan_ids(tmp_path, fixed)


SUBCLASS = '''

class {name}(DistributedSampler):
{body}
'''


@pytest.mark.parametrize("body", [
    "    pass",
    "    def __iter__(self):\n        g = torch.Generator()\n        g.manual_seed(self.seed + self.epoch)\n"
    "        return iter(torch.randperm(len(self.dataset), generator=g)[self.rank::self.num_replicas].tolist())",
    "    def __iter__(self):\n        return iter(list(super().__iter__())[::-1])",
])
def test_own_subclass_following_the_epoch_needs_set_epoch(tmp_path, body):
    code = BATCHED.format(build="    loader = DataLoader(dataset, batch_size=16, sampler=sampler)", epoch="        pass")
    code = code.replace("DistributedSampler(dataset, shuffle=True)", "RepeatSampler(dataset, shuffle=True)")
    code = code.replace("\n\ndef main():", SUBCLASS.format(name="RepeatSampler", body=body) + "\n\ndef main():")
    assert ID in scan_ids(tmp_path, code)


def test_own_subclass_with_its_own_fixed_order_stays_quiet(tmp_path):
    body = ("    def __iter__(self):\n        g = torch.Generator()\n        g.manual_seed(0)\n"
            "        return iter(torch.randperm(len(self.dataset), generator=g)[self.rank::self.num_replicas].tolist())")
    code = BATCHED.format(build="    loader = DataLoader(dataset, batch_size=16, sampler=sampler)", epoch="        pass")
    code = code.replace("DistributedSampler(dataset, shuffle=True)", "FixedSampler(dataset, shuffle=True)")
    code = code.replace("\n\ndef main():", SUBCLASS.format(name="FixedSampler", body=body) + "\n\ndef main():")
    assert ID not in scan_ids(tmp_path, code)


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


def test_endless_generator_over_the_loader_repeats_the_order(tmp_path):
    assert ID in scan_ids(tmp_path, ENDLESS.format(inner="            pass"))


def test_set_epoch_on_an_attribute_holding_the_sampler_itself_reaches_it(tmp_path):
    """``self.sampler = sampler`` ... ``self.sampler.set_epoch(epoch)`` (a trainer keeping the sampler): not a
    loader's default sampler."""
    code = BATCHED.format(build=BUILDS[0], epoch="        holder.sampler.set_epoch(epoch)").replace(
        "    model = DistributedDataParallel(", "    holder = Holder(sampler)\n    model = DistributedDataParallel(").replace(
        "\n\ndef main():", "\n\nclass Holder:\n    def __init__(self, sampler):\n        self.sampler = sampler\n\n\ndef main():")
    assert ID not in scan_ids(tmp_path, code)
