"""Knowledge moved out of Python into rules/scan/patterns.yaml (scan-recall11): the seeds uneven-last-batch accepts
and the batch-splitting methods grad-accum-without-no-sync reads as micro-batches. Same behaviour with the shipped
lists; a name added by an overlay (``--rules DIR/scan/``) is understood without touching the checkers."""

from __future__ import annotations

import pytest

from troubleshooter.core.ruleset import load_rules
from troubleshooter.scan import scan_paths

RANDOM_SIZED = '''\
import os
import random

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def sample_subset(pool):
    n = random.randint(len(pool) // 2, len(pool))
    return Subset(pool, random.sample(range(len(pool)), n))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    {seed}
    train_set = sample_subset(TensorDataset(torch.randn(4000, 16), torch.randint(0, 2, (4000,))))
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=8, sampler=sampler)
    model = DDP(nn.Linear(16, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''

MICRO_BATCHES = '''\
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(64, 64).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters())
    for step in range(1000):
        batch = torch.randn(32, 64, device="cuda")
        optimizer.zero_grad()
        for micro in {split}:
            model(micro).pow(2).mean().backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''


def _ids(tmp_path, code: str, overlay: str | None = None) -> set[str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "train.py"
    script.write_text(code, encoding="utf-8")
    rules = None
    if overlay is not None:
        (tmp_path / "rules" / "scan").mkdir(parents=True)
        (tmp_path / "rules" / "scan" / "extra.yaml").write_text(overlay, encoding="utf-8")
        rules = load_rules([tmp_path / "rules"])
    return set(scan_paths([str(script)], rules).hits)


@pytest.mark.parametrize("seed, quiet", [
    ("pass", False),
    ("random.seed(1234)", True),  # host_seed_calls
    ("numpy_rng = torch.Generator(); numpy_rng.manual_seed(7)", True),  # seed_methods
    ("random.seed(1234 + dist.get_rank())", False),  # a seed that differs per rank seeds nothing alike
])
def test_a_seed_shared_by_the_ranks_quiets_the_random_sized_dataset(tmp_path, seed, quiet):
    found = "uneven-last-batch" in _ids(tmp_path, RANDOM_SIZED.format(seed=seed))
    assert found is not quiet


def test_a_seed_method_added_in_yaml_is_understood(tmp_path):
    code = RANDOM_SIZED.format(seed="reseed_everything(42)")
    assert "uneven-last-batch" in _ids(tmp_path / "shipped", code)
    assert "uneven-last-batch" not in _ids(tmp_path / "grown", code, "seed_methods: [reseed_everything]\n")


@pytest.mark.parametrize("split", ["batch.chunk(4)", "torch.split(batch, 8)", "batch.tensor_split(4)"])
def test_a_split_batch_looped_with_backward_is_accumulation(tmp_path, split):
    assert "grad-accum-without-no-sync" in _ids(tmp_path, MICRO_BATCHES.format(split=split))


def test_a_batch_splitting_method_added_in_yaml_is_understood(tmp_path):
    code = MICRO_BATCHES.format(split="batch.unbind_micro(4)")
    assert "grad-accum-without-no-sync" not in _ids(tmp_path / "shipped", code)
    assert "grad-accum-without-no-sync" in _ids(tmp_path / "grown", code, "batch_split_methods: [unbind_micro]\n")
