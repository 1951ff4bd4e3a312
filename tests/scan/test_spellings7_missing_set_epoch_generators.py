"""missing-set-epoch (session 9): a DistributedSampler's loader restarted forever by a local generator.

Step-based training often draws batches from a helper that loops over the loader without end (``while True: for batch
in loader: yield batch``). Each pass of the outer loop is an epoch: without ``set_epoch`` it replays the same order
(goodfire-ai/spd#104, areal-project/AReaL#632). The loader reaches the helper by name (whatever the parameter is
called), by keyword, or as the call of a local factory that returns it (``loop_over_data(create_data_loader(cfg))``).
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "missing-set-epoch"

SCRIPT = '''
import itertools
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def create_data_loader(batch_size):
    dataset = TensorDataset(torch.randn(4096, 8))
    sampler = DistributedSampler(dataset, shuffle={shuffle})
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, drop_last=True)


{helper}


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DistributedDataParallel(torch.nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
{draw}
    for step in range(10000):
        (batch,) = next(data)
        batch = batch.cuda()
        loss = ((model(batch) - batch) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''

WHILE_TRUE = '''def loop_over_data(loader):
    while True:
        for batch in loader:
            yield batch'''
COUNTED_FOR = '''def endless(dl):
    for _ in itertools.count():
        for b in dl:
            yield b'''
SEEDED = '''def loop_over_data(loader):
    epoch = 0
    while True:
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            yield batch
        epoch += 1'''
ONE_PASS = '''def loop_over_data(loader):
    for batch in loader:
        yield batch'''

INLINE_FACTORY = "    data = loop_over_data(create_data_loader(64))"
BOUND = "    train_dl = create_data_loader(64)\n    data = endless(train_dl)"
KEYWORD = "    train_dl = create_data_loader(64)\n    data = loop_over_data(loader=train_dl)"


@pytest.mark.parametrize("helper,draw", [(WHILE_TRUE, INLINE_FACTORY), (COUNTED_FOR, BOUND), (WHILE_TRUE, KEYWORD)],
                         ids=["factory_call_handed_over", "bound_name_other_parameter", "keyword"])
def test_loader_restarted_forever_without_set_epoch(tmp_path, helper, draw):
    assert ID in scan_ids(tmp_path, SCRIPT.format(shuffle="True", helper=helper, draw=draw))


def test_generator_that_seeds_each_pass_is_quiet(tmp_path):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(shuffle="True", helper=SEEDED, draw=INLINE_FACTORY))


def test_generator_reading_the_loader_once_is_quiet(tmp_path):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(shuffle="True", helper=ONE_PASS, draw=INLINE_FACTORY))


def test_sampler_without_shuffling_is_quiet(tmp_path):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(shuffle="False", helper=WHILE_TRUE, draw=INLINE_FACTORY))
