"""checkpoint-without-module follows the wrapper out of a set-up helper that returns it inside a tuple."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shown_ids

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


{helper}


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net = nn.Linear(8, 2).cuda()
    {unpack}
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(net(x.cuda()), y.cuda()).backward()
            opt.step()
    {after}
    if dist.get_rank() == 0:
        torch.save({{"model": net.state_dict()}}, "last.pt")


if __name__ == "__main__":
    main()
'''

FUNCTION = '''def prepare(net, local_rank):
    wrapped = DDP(net, device_ids=[local_rank])
    data = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
    sampler = DistributedSampler(data)
    return DataLoader(data, batch_size=8, sampler=sampler), sampler, wrapped, torch.optim.SGD(wrapped.parameters(), 0.1)'''

METHOD = '''class Setup:
    def build(self, net, local_rank):
        net = DDP(net, device_ids=[local_rank])
        data = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
        sampler = DistributedSampler(data)
        return DataLoader(data, batch_size=8, sampler=sampler), sampler, net, torch.optim.SGD(net.parameters(), 0.1)'''


@pytest.mark.parametrize("helper, call", [(FUNCTION, "prepare(net, local_rank)"),
                                          (METHOD, "Setup().build(net, local_rank)")])
@pytest.mark.parametrize("after, flagged", [
    ("pass", True),
    ("net = net.module", False),  # rebound to the bare model before the save
])
def test_wrapper_unpacked_from_a_set_up_helper(tmp_path, helper, call, after, flagged):
    code = SCRIPT.format(helper=helper, unpack=f"loader, sampler, net, opt = {call}", after=after)
    assert ("checkpoint-without-module" in shown_ids(tmp_path, code)) is flagged


def test_a_position_that_is_not_the_wrap_is_not_the_wrapper(tmp_path):
    helper = FUNCTION.replace("return DataLoader(data, batch_size=8, sampler=sampler), sampler, wrapped,",
                              "return DataLoader(data, batch_size=8, sampler=sampler), sampler, wrapped.module,")
    code = SCRIPT.format(helper=helper, unpack="loader, sampler, net, opt = prepare(net, local_rank)", after="pass")
    assert "checkpoint-without-module" not in shown_ids(tmp_path, code)
