"""Arguments read by meaning whatever their spelling (fixes found by bench/scan_metamorphic.py): a parameter of a
known signature (rules/scan/patterns.yaml ``call_signatures``) passed by position or by keyword is the same
argument to every checker, and ``mp.spawn(fn=worker)`` spawns ``worker`` as ``mp.spawn(worker)`` does."""

from __future__ import annotations

import pytest

from tests.scan.quality import shown_findings
from troubleshooter.scan import shipped_patterns
from troubleshooter.scan.patterns import _signature

LOADER = '''\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 2).cuda(), device_ids=[local_rank])
    data = TensorDataset(torch.randn(64, 4), torch.randn(64, 2))
    sampler = DistributedSampler(data)
    loader = {loader}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        {set_epoch}
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


def scan(tmp_path, text: str) -> set[str]:
    path = tmp_path / "train.py"
    path.write_text(text, encoding="utf-8")
    return set(shown_findings([str(path)])[0])


@pytest.mark.parametrize("loader", ["DataLoader(data, batch_size=8, shuffle=True, sampler=sampler)",
                                    "DataLoader(data, 8, True, sampler)", "DataLoader(data, 8, True, sampler=sampler)"])
def test_shuffle_beside_a_sampler_found_in_every_spelling(tmp_path, loader):
    assert "shuffle-with-sampler" in scan(tmp_path, LOADER.format(loader=loader, set_epoch="sampler.set_epoch(epoch)"))


@pytest.mark.parametrize("loader", ["DataLoader(data, batch_size=8, sampler=sampler)", "DataLoader(data, 8, False, sampler)"])
def test_missing_set_epoch_found_in_every_spelling(tmp_path, loader):
    assert "missing-set-epoch" in scan(tmp_path, LOADER.format(loader=loader, set_epoch="pass"))
    assert "missing-set-epoch" not in scan(tmp_path, LOADER.format(loader=loader, set_epoch="sampler.set_epoch(epoch)"))


SPAWNED = '''\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(gpu, world_size):
    dist.init_process_group("nccl", rank=gpu, world_size=world_size)
    torch.cuda.set_device(gpu)
    t = torch.ones(1).cuda()
    if gpu == 0:
        dist.all_reduce(t)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn({call})
'''


@pytest.mark.parametrize("call", ["worker, args=(2,), nprocs=2", "fn=worker, args=(2,), nprocs=2"])
def test_spawned_function_reads_its_first_parameter_as_the_rank(tmp_path, call):
    assert "collective-mismatch" in scan(tmp_path, SPAWNED.format(call=call))


def test_signatures_are_read_from_the_rules():
    assert _signature("torch.save(obj, f)") == ("torch.save", ("obj", "f"))
    signatures = shipped_patterns().signatures
    assert signatures["torch.utils.data.DataLoader"][:4] == ("dataset", "batch_size", "shuffle", "sampler")
    assert signatures["torch.multiprocessing.spawn"][0] == "fn"
