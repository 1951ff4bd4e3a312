"""An accumulation count bound in a set-up helper and returned with the loader and model (``every, loader, model =
setup(...)``) is read where the helper binds it: 1 unless a large batch is asked for (accumulation off by default,
advice), or a literal above 1 (a warning), whether the loop is inline or in a trainer class it is handed to."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import argparse
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def setup(local, opts):
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
{count}
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=batch, sampler=sampler)
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[local])
    return every, loader, net, sampler


class Runner:
    def __init__(self, net, opt, every):
        self.net = net
        self.opt = opt
        self.every = every

    def run(self, loader, sampler):
        for epoch in range(2):
            sampler.set_epoch(epoch)
            for i, (x, y) in enumerate(loader):
                loss = nn.functional.mse_loss(self.net(x.cuda()), y.cuda()) / self.every
                loss.backward()
                if i % self.every == 0:
                    self.opt.step()
                    self.opt.zero_grad()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=16)
    opts = p.parse_args()
    every, loader, net, sampler = setup(int(os.environ["LOCAL_RANK"]), opts)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    Runner(net, opt, every).run(loader, sampler)


if __name__ == "__main__":
    main()
'''
CASES = {
    "1 unless the batch is too big": ("    every = 1\n    batch = opts.batch\n    if opts.batch > 16:\n"
                                      "        every = opts.batch // 16\n        batch = 16", False),
    "a literal above 1": ("    every = 4\n    batch = opts.batch", True),
}


@pytest.mark.parametrize("count, warns", CASES.values(), ids=CASES.keys())
def test_a_count_returned_by_the_setup_is_read_there(tmp_path, count, warns):
    assert shows(tmp_path, "grad-accum-without-no-sync", TEMPLATE.format(count=count)) is warns
