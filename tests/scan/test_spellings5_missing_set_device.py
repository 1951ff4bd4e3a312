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


def test_backend_option_defaulting_to_gloo_needs_no_device_binding(tmp_path):
    assert ID not in scan_ids(tmp_path, OPTION_BACKEND.format(default='"gloo"'))


def test_backend_option_defaulting_to_nccl_does(tmp_path):
    assert ID in scan_ids(tmp_path, OPTION_BACKEND.format(default='"nccl"'))


def test_backend_option_reassigned_is_not_trusted_as_gloo(tmp_path):
    code = OPTION_BACKEND.format(default='"gloo"').replace(
        "    distributed.init_process_group(", '    args.backend = "nccl"\n    distributed.init_process_group(')
    assert ID in scan_ids(tmp_path, code)


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


@pytest.mark.parametrize("work", BARE_WORK)
def test_bare_cuda_without_setup_is_one_finding(tmp_path, work):
    ids = scan_ids(tmp_path, SPAWNED.format(setup="", work=work))
    assert ID in ids and "hardcoded-cuda0" not in ids


@pytest.mark.parametrize("setup", [
    "    torch.cuda.set_device(rank)",
    '    torch.set_default_device(f"cuda:{rank}")',
    "    torch.cuda.set_device(torch.device('cuda', rank))",
])
@pytest.mark.parametrize("work", BARE_WORK)
def test_rank_device_setup_stays_quiet(tmp_path, setup, work):
    ids = scan_ids(tmp_path, SPAWNED.format(setup=setup, work=work))
    assert ID not in ids and "hardcoded-cuda0" not in ids


def test_cuda_device_context_is_setup(tmp_path):
    code = SPAWNED.format(setup="", work="    with torch.cuda.device(rank):\n"
                                         "        model = nn.Linear(8, 2).cuda()\n        dist.all_reduce(model.weight.data)")
    assert ID not in scan_ids(tmp_path, code)


def test_device_id_at_init_is_setup(tmp_path):
    code = SPAWNED.format(setup="", work=BARE_WORK[1]).replace(
        "rank=rank, world_size=world_size)", "rank=rank, world_size=world_size, device_id=torch.device('cuda', rank))")
    assert ID not in scan_ids(tmp_path, code)


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


def test_device_read_from_own_config_is_not_a_library_binding(tmp_path):
    """rl_games#284: ``self.config.get("device_name", "cuda")`` reads a setting; nothing binds the GPU."""
    assert ID in scan_ids(tmp_path, CONFIGURED)


def test_device_from_an_imported_helper_may_bind_it(tmp_path):
    code = CONFIGURED.replace('self.config.get("device_name", "cuda")', 'get_device(self.config)').replace(
        "import torch.nn as nn", "import torch.nn as nn\nfrom mylib.utils import get_device").replace(
        '            self.device_name = "cuda:" + str(self.local_rank)\n', "")
    assert ID not in scan_ids(tmp_path, code)
