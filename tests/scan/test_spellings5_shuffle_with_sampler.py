"""shuffle-with-sampler (session 5): loaders built by a factory function or method of the script.

``DataLoader(ds, shuffle=shuffle, sampler=sampler)`` inside ``build_loader(dataset, shuffle=True, ...)``: the
parameter holds what every call of the factory passes (or its default), the way real code spells it
(ultralytics/yolov3#231, MultiVae#33 keep ``shuffle=True`` beside a DistributedSampler through a helper). Quiet when
the calls disagree, pass something unknown, or never give the factory a sampler.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "shuffle-with-sampler"

FACTORY = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def build_loader(dataset, batch_size, shuffle=True, distributed=True):
    sampler = DistributedSampler(dataset) if distributed else None
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, sampler=sampler, num_workers=2)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dataset = TensorDataset(torch.randn(512, 8), torch.randint(0, 2, (512,)))
    loader = {call}
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    for epoch in range(3):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("call", [
    "build_loader(dataset, 32)",
    "build_loader(dataset, 32, True)",
    "build_loader(dataset, 32, shuffle=True, distributed=True)",
])
def test_factory_shuffle_parameter_true_beside_its_distributed_sampler(tmp_path, call):
    assert ID in scan_ids(tmp_path, FACTORY.format(call=call))


@pytest.mark.parametrize("call", [
    "build_loader(dataset, 32, False)",
    "build_loader(dataset, 32, shuffle=False)",
    "build_loader(dataset, 32, shuffle=args_shuffle)",
    "build_loader(dataset, 32, **{'shuffle': False})",
])
def test_factory_shuffle_off_or_unknown_stays_quiet(tmp_path, call):
    code = FACTORY.format(call=call).replace("    dist.init_process_group", "    args_shuffle = os.environ.get('S') == '1'\n    dist.init_process_group")
    assert ID not in scan_ids(tmp_path, code)


def test_calls_that_disagree_stay_quiet(tmp_path):
    code = FACTORY.format(call="build_loader(dataset, 32)").replace(
        "    model = DDP(", "    val_loader = build_loader(dataset, 32, shuffle=False)\n    model = DDP(")
    assert ID not in scan_ids(tmp_path, code)


PASS_THROUGH = '''
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Data:
    def loader(self, dataset, shuffle=True, sampler=None):
        return DataLoader(dataset, batch_size=16, shuffle=shuffle, sampler=sampler)


def main():
    dist.init_process_group("gloo")
    dataset = TensorDataset(torch.randn(64, 4))
    data = Data()
    loader = {call}
    for epoch in range(2):
        for batch in loader:
            pass
'''


def test_method_given_a_sampler_keeps_its_default_shuffle(tmp_path):
    code = PASS_THROUGH.format(call="data.loader(dataset, sampler=DistributedSampler(dataset))")
    assert ID in scan_ids(tmp_path, code)


def test_method_never_given_a_sampler_stays_quiet(tmp_path):
    assert ID not in scan_ids(tmp_path, PASS_THROUGH.format(call="data.loader(dataset)"))
