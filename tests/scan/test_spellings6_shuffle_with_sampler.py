"""shuffle-with-sampler (session 6): the shuffle flag or the sampler handed over through a ``**kwargs`` dict.

Real scripts collect loader options in a dict and spread it (kubernetes-sigs/jobset#286: ``cuda_kwargs =
{'num_workers': 1, 'pin_memory': True, 'shuffle': True}`` merged into ``train_kwargs`` for CUDA runs, then
``DataLoader(train_set, **train_kwargs, sampler=train_sampler)``). The keys the function puts in the dict count
as if passed by keyword: a literal, ``dict(...)``, ``.update(...)`` with a literal or another such dict. Quiet when
the dict says ``shuffle=False``, when the key is not there, or when the dict comes from elsewhere (unknown).
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "shuffle-with-sampler"

SCRIPT = '''
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main(args):
    dist.init_process_group(backend="gloo")
    device = "cpu"
    model = nn.parallel.DistributedDataParallel(nn.Linear(8, 2).to(device))
    train_set = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
    train_sampler = DistributedSampler(dataset=train_set)
{build}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        train_sampler.set_epoch(epoch)
        for x, y in train_loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
'''


def script(build: str) -> str:
    return SCRIPT.format(build="\n".join("    " + line for line in build.strip().splitlines()))


@pytest.mark.parametrize("build", [
    # jobset#286: the CUDA options (with shuffle) merged into the training options under a condition
    """
train_kwargs = {"batch_size": 64}
if args.cuda:
    cuda_kwargs = {"num_workers": 1, "pin_memory": True, "shuffle": True}
    train_kwargs.update(cuda_kwargs)
train_loader = DataLoader(train_set, **train_kwargs, sampler=train_sampler)
""",
    # the options as one literal
    """
loader_kwargs = {"batch_size": 64, "shuffle": True, "num_workers": 2}
train_loader = DataLoader(train_set, sampler=train_sampler, **loader_kwargs)
""",
    # dict(...) call, the sampler itself passed through the dict
    """
opts = dict(batch_size=64, shuffle=True, sampler=train_sampler)
train_loader = DataLoader(train_set, **opts)
""",
    # update with keywords
    """
opts = {"batch_size": 64}
opts.update(shuffle=True)
train_loader = DataLoader(train_set, sampler=train_sampler, **opts)
""",
])
def test_shuffle_true_through_a_kwargs_dict_beside_a_sampler(tmp_path, build):
    assert ID in scan_ids(tmp_path, script(build))


@pytest.mark.parametrize("build", [
    # the dict says shuffle=False
    """
train_kwargs = {"batch_size": 64, "shuffle": False}
train_loader = DataLoader(train_set, **train_kwargs, sampler=train_sampler)
""",
    # no shuffle key at all
    """
train_kwargs = {"batch_size": 64, "num_workers": 2}
train_loader = DataLoader(train_set, **train_kwargs, sampler=train_sampler)
""",
    # the update comes after the loader is built
    """
train_kwargs = {"batch_size": 64}
train_loader = DataLoader(train_set, **train_kwargs, sampler=train_sampler)
train_kwargs.update({"shuffle": True})
""",
    # the dict comes from elsewhere: unknown, not assumed
    """
train_kwargs = args.loader_options
train_loader = DataLoader(train_set, **train_kwargs, sampler=train_sampler)
""",
    # shuffle through the dict but no sampler anywhere
    """
train_kwargs = {"batch_size": 64, "shuffle": True}
train_loader = DataLoader(train_set, **train_kwargs, sampler=None)
""",
])
def test_quiet_when_the_dict_does_not_evidently_shuffle_beside_a_sampler(tmp_path, build):
    assert ID not in scan_ids(tmp_path, script(build))
