"""uneven-last-batch spellings (scan-recall7b, second session): a sampler class of the script that picks each rank's
indices itself (mlcommons/storage#455's family: ``ceil(n / size)`` per rank with the last rank cut at the end, or a
stride ``range(rank, n, world_size)``) and never evens the ranks out, so with a length that does not divide evenly the
ranks run different numbers of steps. The rank reaches the sampler as constructor arguments or is read inside it.
Near misses that stay quiet: padding like DistributedSampler (``total_size``, ``indices += indices[:pad]``), a floor
division that drops the remainder, a ``drop_last`` option, a subclass of DistributedSampler, ``with model.join():``.
Also this rank's piece of a split bound to a name and wrapped afterwards (``mine = np.array_split(order, world)[rank]``,
``Subset(data, mine.tolist())``)."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "uneven-last-batch"

SCRIPT = '''
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, Sampler, TensorDataset


{sampler}


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(1001, 8), torch.randint(0, 2, (1001,)))
    sampler = {build}
    loader = DataLoader(data, batch_size=16, sampler=sampler, drop_last=True)
    for epoch in range(3):
{loop}


if __name__ == "__main__":
    main()
'''

STEP = '''for x, y in loader:
    loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()'''

PASSED = "ShardSampler(len(data), dist.get_rank(), dist.get_world_size())"
READ = "ShardSampler(len(data))"


def script(sampler: str, build: str = PASSED, join: bool = False) -> str:
    step = STEP if not join else "with model.join():\n" + "\n".join("    " + line for line in STEP.splitlines())
    return SCRIPT.format(sampler=sampler.strip("\n"), build=build,
                         loop="\n".join("        " + line for line in step.splitlines()))


STRIDE = '''
class ShardSampler(Sampler):
    def __init__(self, n, rank, world_size):
        self.indices = list(range(rank, n, world_size))

    def __iter__(self):
        return iter(self.indices)

    def __len__(self):
        return len(self.indices)
'''

CEIL_CLAMP = '''
class ShardSampler(Sampler):
    def __init__(self, n, rank, size):
        samples_per_proc = int(math.ceil(n / size))
        start = rank * samples_per_proc
        end = min((rank + 1) * samples_per_proc, n)
        self.indices = list(range(start, end))

    def __iter__(self):
        yield from self.indices

    def __len__(self):
        return len(self.indices)
'''

READ_INSIDE = '''
class ShardSampler(Sampler):
    def __init__(self, n):
        self.rank = dist.get_rank()
        self.replicas = dist.get_world_size()
        self.n = n

    def __iter__(self):
        order = torch.randperm(self.n).tolist()
        return iter(order[self.rank::self.replicas])

    def __len__(self):
        return len(range(self.rank, self.n, self.replicas))
'''

PADDED = '''
class ShardSampler(Sampler):
    def __init__(self, n, rank, world_size):
        self.num_samples = int(math.ceil(n / world_size))
        self.total_size = self.num_samples * world_size
        indices = list(range(n))
        indices += indices[:self.total_size - n]
        self.indices = indices[rank:self.total_size:world_size]

    def __iter__(self):
        return iter(self.indices)

    def __len__(self):
        return self.num_samples
'''

FLOOR = '''
class ShardSampler(Sampler):
    def __init__(self, n, rank, world_size):
        per_rank = n // world_size
        self.indices = list(range(rank * per_rank, (rank + 1) * per_rank))

    def __iter__(self):
        return iter(self.indices)

    def __len__(self):
        return len(self.indices)
'''

SUBCLASS = '''
class ShardSampler(DistributedSampler):
    def __init__(self, dataset):
        super().__init__(dataset, shuffle=True)
        self.offset = self.rank
'''

POSITIVE = {
    "stride-rank-passed": script(STRIDE),
    "ceil-chunk-clamped": script(CEIL_CLAMP),
    "rank-read-inside": script(READ_INSIDE, build=READ),
    "keyword-sampler-built-inline": script(STRIDE).replace(
        "sampler=sampler,", "sampler=ShardSampler(len(data), dist.get_rank(), dist.get_world_size()),"),
}

QUIET = {
    "padded-like-distributed-sampler": script(PADDED),
    "floor-division-drops-remainder": script(FLOOR),
    "subclass-of-distributed-sampler": script(SUBCLASS, build="ShardSampler(data)"),
    "join-context": script(STRIDE, join=True),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_sampler_that_shards_by_rank_unevenly(tmp_path, name):
    assert ID in scan_ids(tmp_path, POSITIVE[name])


@pytest.mark.parametrize("name", sorted(QUIET))
def test_even_shards_or_join_stay_quiet(tmp_path, name):
    assert ID not in scan_ids(tmp_path, QUIET[name])


PIECE = '''
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset, TensorDataset


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    rank, world = dist.get_rank(), dist.get_world_size()
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(1001, 8), torch.randint(0, 2, (1001,)))
    order = np.random.default_rng(0).permutation(len(data))
    {piece}
    loader = DataLoader(Subset(data, mine.tolist()), batch_size=16)
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("piece, uneven", [
    ("mine = np.array_split(order, world)[rank]", True),
    ("mine = torch.tensor(order).chunk(world)[rank]", True),
    ("mine = order[: len(order) // world * world].reshape(world, -1)[rank]", False),
])
def test_this_ranks_piece_bound_to_a_name_then_wrapped(tmp_path, piece, uneven):
    """``np.array_split(order, world)[rank]`` bound to a name, the loader's dataset a Subset of it: uneven pieces
    unless a floor division cut the remainder first."""
    assert (ID in scan_ids(tmp_path, PIECE.format(piece=piece))) is uneven
