"""gradient-checkpointing-conflict spellings (scan-recall7b, session 9): reentrant activation checkpointing under
DDP(find_unused_parameters=True), the checkpoint spelled as imported, aliased or dotted (``checkpoint``,
``cp.checkpoint``, ``torch.utils.checkpoint.checkpoint``, ``checkpoint_sequential``, ``ckpt.checkpoint(blk.__call__,
x)``: wenet's family), the flag passed as a literal, through ``**ddp_kwargs`` built in the function, or as a module
constant (``FIND_UNUSED = True``). Near misses that stay quiet: ``use_reentrant=False``, no find_unused_parameters, a
constant that is False, a constant some function rebinds (which value the wrap sees is not evident)."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "gradient-checkpointing-conflict"

SCRIPT = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
{imports}
from torch.nn.parallel import DistributedDataParallel as DDP
{constants}

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(16, 16) for _ in range(4)])
        self.cls = nn.Linear(16, 4)

    def forward(self, x):
{forward}
        return self.cls(x)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
{before}    model = DDP(Net().cuda(), device_ids=[local_rank]{options})
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(100):
        x, y = torch.randn(8, 16).cuda(), torch.randint(0, 4, (8,)).cuda()
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

FU = ", find_unused_parameters=True"
LOOP = "for blk in self.blocks:\n    x = {call}"


def _script(imports: str, forward: str, options: str = FU, constants: str = "", before: str = "") -> str:
    return SCRIPT.format(imports=imports, forward="\n".join("        " + line for line in forward.splitlines()),
                         options=options, constants=constants, before=before)


WARN = {
    "imported_checkpoint": _script("from torch.utils.checkpoint import checkpoint", LOOP.format(call="checkpoint(blk, x)")),
    "module_alias": _script("import torch.utils.checkpoint as cp", LOOP.format(call="cp.checkpoint(blk, x)")),
    "dotted": _script("import torch.utils.checkpoint", LOOP.format(call="torch.utils.checkpoint.checkpoint(blk, x)")),
    "call_method_argument": _script("import torch.utils.checkpoint as ckpt",
                                    LOOP.format(call="ckpt.checkpoint(blk.__call__, x)")),
    "sequential": _script("from torch.utils.checkpoint import checkpoint_sequential",
                          "x = checkpoint_sequential(nn.Sequential(*self.blocks), 2, x)"),
    "explicit_reentrant": _script("from torch.utils.checkpoint import checkpoint",
                                  LOOP.format(call="checkpoint(blk, x, use_reentrant=True)")),
    "flag_through_kwargs_dict": _script("from torch.utils.checkpoint import checkpoint",
                                        LOOP.format(call="checkpoint(blk, x)"), options=", **ddp_kwargs",
                                        before="    ddp_kwargs = {'find_unused_parameters': True}\n"),
    "flag_module_constant": _script("from torch.utils.checkpoint import checkpoint", LOOP.format(call="checkpoint(blk, x)"),
                                    options=", find_unused_parameters=FIND_UNUSED", constants="\nFIND_UNUSED = True\n"),
}

QUIET = {
    "non_reentrant": _script("from torch.utils.checkpoint import checkpoint",
                             LOOP.format(call="checkpoint(blk, x, use_reentrant=False)")),
    "no_find_unused": _script("from torch.utils.checkpoint import checkpoint", LOOP.format(call="checkpoint(blk, x)"),
                              options=""),
    "constant_false": _script("from torch.utils.checkpoint import checkpoint", LOOP.format(call="checkpoint(blk, x)"),
                              options=", find_unused_parameters=FIND_UNUSED", constants="\nFIND_UNUSED = False\n"),
    "constant_rebound_in_a_function": _script(
        "from torch.utils.checkpoint import checkpoint", LOOP.format(call="checkpoint(blk, x)"),
        options=", find_unused_parameters=FIND_UNUSED",
        constants="\nFIND_UNUSED = True\n\n\ndef configure():\n    global FIND_UNUSED\n    FIND_UNUSED = False\n"),
    "kwargs_dict_false": _script("from torch.utils.checkpoint import checkpoint", LOOP.format(call="checkpoint(blk, x)"),
                                 options=", **ddp_kwargs", before="    ddp_kwargs = {'find_unused_parameters': False}\n"),
}


@pytest.mark.parametrize("name", sorted(WARN))
def test_reentrant_checkpoint_with_find_unused_warns(tmp_path, name):
    assert ID in scan_ids(tmp_path, WARN[name])


@pytest.mark.parametrize("name", sorted(QUIET))
def test_non_reentrant_or_without_find_unused_stays_quiet(tmp_path, name):
    assert ID not in scan_ids(tmp_path, QUIET[name])
