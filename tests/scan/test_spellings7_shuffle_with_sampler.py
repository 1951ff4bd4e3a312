"""shuffle-with-sampler (session 9): the loader's keywords built up in a dict by item assignment.

A loader factory often starts from ``kwargs = {"batch_size": b, "shuffle": True}`` and adds the DistributedSampler
only for distributed runs (``kwargs["sampler"] = DistributedSampler(ds)``): DataLoader(ds, **kwargs) then raises
'sampler option is mutually exclusive with shuffle' exactly when the run is distributed (MultiVae#33, yolov3#231).
``name["key"] = value`` counts like ``name.update(...)``, in line order (a later key wins, as in the dict).
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "shuffle-with-sampler"

SCRIPT = '''
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def build_loader(ds, batch_size, distributed):
{body}
    return DataLoader(ds, **kwargs)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    ds = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
    loader = build_loader(ds, 8, True)
    model = DistributedDataParallel(torch.nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''

SHUFFLE_THEN_SAMPLER = '''    kwargs = {{"batch_size": batch_size, "shuffle": True, "num_workers": 2}}
    if distributed:
        kwargs["sampler"] = DistributedSampler(ds)'''
BOTH_BY_ITEM = '''    kwargs = dict(batch_size=batch_size, num_workers=2)
    kwargs["shuffle"] = True
    if distributed:
        kwargs["sampler"] = DistributedSampler(ds)'''
SHUFFLE_TURNED_OFF = '''    kwargs = {{"batch_size": batch_size, "shuffle": True, "num_workers": 2}}
    if distributed:
        kwargs["sampler"] = DistributedSampler(ds)
        kwargs["shuffle"] = False'''
SHUFFLE_WHEN_NO_SAMPLER = '''    kwargs = {{"batch_size": batch_size, "num_workers": 2}}
    kwargs["sampler"] = DistributedSampler(ds) if distributed else None
    kwargs["shuffle"] = kwargs["sampler"] is None'''
SAMPLER_ONLY = '''    kwargs = {{"batch_size": batch_size, "num_workers": 2}}
    kwargs["sampler"] = DistributedSampler(ds)'''


@pytest.mark.parametrize("body", [SHUFFLE_THEN_SAMPLER, BOTH_BY_ITEM], ids=["dict_literal_then_item", "items_only"])
def test_shuffle_and_sampler_in_the_same_kwargs(tmp_path, body):
    assert ID in scan_ids(tmp_path, SCRIPT.format(body=body.format()))


@pytest.mark.parametrize("body", [SHUFFLE_TURNED_OFF, SHUFFLE_WHEN_NO_SAMPLER, SAMPLER_ONLY],
                         ids=["shuffle_turned_off_later", "shuffle_only_without_sampler", "no_shuffle"])
def test_quiet_when_the_dict_never_holds_both(tmp_path, body):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(body=body.format()))
