"""missing-set-device (session 5): spellings of the process group's backend and of the device set-up.

* the backend read from an option (``init_process_group(backend=args.backend)``, ``--backend`` default "gloo"):
  gloo needs no GPU binding (narumiruna/pytorch-distributed-example#5, #11), nccl does;
* the bare CUDA device without any set-up (``.to("cuda")``, ``torch.device("cuda")``,
  ``set_default_tensor_type(torch.cuda.HalfTensor)``, pytorch-tpu/llama#21) is one defect: missing-set-device,
  not a second ``hardcoded-cuda0`` warning;
* set-up spellings that bind the rank's GPU stay quiet (``set_device``, ``set_default_device(f"cuda:{rank}")``,
  ``with torch.cuda.device(rank):``, ``device_id=``); a setting read from the script's own config
  (``self.config.get("device", "cuda")``) is not a library that binds the device (rl_games#284).
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "missing-set-device"

OPTION_BACKEND = '''
import argparse
import torch
import torch.nn as nn
from torch import distributed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default={default})
    parser.add_argument("--rank", type=int)
    parser.add_argument("--world-size", type=int)
    args = parser.parse_args()
    distributed.init_process_group(backend=args.backend, init_method="tcp://127.0.0.1:23456",
                                   rank=args.rank, world_size=args.world_size)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.parallel.DistributedDataParallel(nn.Linear(8, 2).to(device))
    for step in range(10):
        model(torch.randn(4, 8).to(device)).sum().backward()


if __name__ == "__main__":
    main()
'''

# a backend option reassigned before init is not trusted as its gloo default
BACKEND_REASSIGNED = OPTION_BACKEND.format(default='"gloo"').replace(
    "    distributed.init_process_group(", '    args.backend = "nccl"\n    distributed.init_process_group(')


SPAWNED = '''
import os
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


def setup(rank, world_size):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
{setup}


def worker(rank, world_size):
    setup(rank, world_size)
{work}
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
'''

BARE_WORK = [
    '    torch.set_default_tensor_type(torch.cuda.HalfTensor)\n    model = nn.Linear(8, 2)\n    print(model(torch.ones(2, 8)))',
    '    model = nn.Linear(8, 2).to("cuda")\n    dist.all_reduce(model.weight.data)',
    '    device = torch.device("cuda")\n    model = nn.Linear(8, 2).to(device)\n    dist.all_reduce(model.weight.data)',
    '    model = nn.Linear(8, 2).cuda()\n    dist.all_reduce(model.weight.data)',
]

RANK_DEVICE_SETUPS = [
    "    torch.cuda.set_device(rank)",
    '    torch.set_default_device(f"cuda:{rank}")',
    "    torch.cuda.set_device(torch.device('cuda', rank))",
]
CUDA_DEVICE_CONTEXT = SPAWNED.format(setup="", work="    with torch.cuda.device(rank):\n"
                                     "        model = nn.Linear(8, 2).cuda()\n        dist.all_reduce(model.weight.data)")
DEVICE_ID_AT_INIT = SPAWNED.format(setup="", work=BARE_WORK[1]).replace(
    "rank=rank, world_size=world_size)", "rank=rank, world_size=world_size, device_id=torch.device('cuda', rank))")


CONFIGURED = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn


class Agent:
    def __init__(self, config):
        self.config = config
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        self.device_name = self.config.get("device_name", "cuda")
        if self.config.get("multi_gpu", False):
            dist.init_process_group("nccl", rank=self.local_rank, world_size=int(os.environ["WORLD_SIZE"]))
            self.device_name = "cuda:" + str(self.local_rank)
        self.model = nn.Linear(8, 2).to(self.device_name)

    def sync(self):
        for p in self.model.parameters():
            dist.broadcast(p.data, 0)


Agent({"multi_gpu": True}).sync()
'''

# a device from an imported helper may bind it
DEVICE_FROM_A_HELPER = CONFIGURED.replace('self.config.get("device_name", "cuda")', 'get_device(self.config)').replace(
    "import torch.nn as nn", "import torch.nn as nn\nfrom mylib.utils import get_device").replace(
    '            self.device_name = "cuda:" + str(self.local_rank)\n', "")


# A spelling of the script and whether missing-set-device must warn on it.
SPELLINGS = [
    pytest.param(OPTION_BACKEND.format(default='"gloo"'), False, id="backend-option-defaulting-to-gloo"),
    pytest.param(OPTION_BACKEND.format(default='"nccl"'), True, id="backend-option-defaulting-to-nccl"),
    pytest.param(BACKEND_REASSIGNED, True, id="backend-option-reassigned"),
    pytest.param(CUDA_DEVICE_CONTEXT, False, id="cuda-device-context"),
    pytest.param(DEVICE_ID_AT_INIT, False, id="device-id-at-init"),
    # rl_games#284: ``self.config.get("device_name", "cuda")`` reads a setting; nothing binds the GPU
    pytest.param(CONFIGURED, True, id="device-read-from-own-config"),
    pytest.param(DEVICE_FROM_A_HELPER, False, id="device-from-an-imported-helper"),
]


@pytest.mark.parametrize(("code", "warns"), SPELLINGS)
def test_each_spelling(tmp_path, code, warns):
    assert (ID in scan_ids(tmp_path, code)) is warns


# Bare CUDA work in spawned ranks, without a device set-up (one finding, not also hardcoded-cuda0) and after each
# rank-device set-up (quiet); rows setup x work, as the two parametrize marks ran them.
SPAWNED_ROWS = [
    *(pytest.param(SPAWNED.format(setup="", work=work), True, id=f"bare-{i}") for i, work in enumerate(BARE_WORK)),
    *(pytest.param(SPAWNED.format(setup=setup, work=work), False, id=f"setup-{j}-bare-{i}")
      for j, setup in enumerate(RANK_DEVICE_SETUPS) for i, work in enumerate(BARE_WORK)),
]


@pytest.mark.parametrize(("code", "warns"), SPAWNED_ROWS)
def test_spawned_ranks_bare_cuda_is_one_finding(tmp_path, code, warns):
    ids = scan_ids(tmp_path, code)
    assert (ID in ids) is warns and "hardcoded-cuda0" not in ids
