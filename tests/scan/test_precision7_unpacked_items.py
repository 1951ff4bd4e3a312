"""logging-from-all-ranks: a save whose path is a loop's item, under any unpacking, is one file per item (issue 11).

A distillation step caches each sample's teacher output to the sample's own file (torchdistill: ``for i,
(output, path) in enumerate(zip(outputs, cache_file_paths)): torch.save(..., path)``): every rank writes the files
of its own samples, no file has two writers. The item may come through ``enumerate``, ``zip``, nested tuples or a
list target, and the path may be built from it. A loop whose item is not in the path (one shared file rewritten
per item) still warns.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.conftest import shown_ids

ID = "logging-from-all-ranks"

TEMPLATE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def cache_outputs(outputs, paths):
{body}


def main():
    dist.init_process_group("nccl")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[local])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(100):
        x = torch.randn(4, 8).cuda()
        out = net(x)
        cache_outputs(out.detach().cpu(), [f"cache/{{step}}_{{i}}.pt" for i in range(4)])
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

QUIET = {
    "enumerate of zip": '''    for i, (output, cache_file_path) in enumerate(zip(outputs, paths)):
        torch.save({"teacher": output, "index": i}, cache_file_path)''',
    "zip, plain tuple": '''    for output, target in zip(outputs, paths):
        torch.save(output, target)''',
    "list target": '''    for [output, where] in zip(outputs, paths):
        torch.save(output, where)''',
    "path built from the item": '''    for k, (output, stem) in enumerate(zip(outputs, paths)):
        torch.save(output, os.path.join("cache", stem + ".npz"))''',
    "nested item, other names": '''    for n, (vec, (folder, name)) in enumerate(zip(outputs, [os.path.split(p) for p in paths])):
        full = os.path.join(folder, name)
        torch.save(vec, full)''',
}

LOUD = {
    "item not in the path": '''    for i, (output, cache_file_path) in enumerate(zip(outputs, paths)):
        torch.save(output, "cache/latest.pt")''',
    "index only, shared file": '''    for i, output in enumerate(outputs):
        torch.save(outputs, "cache/all_outputs.pt")''',
}


def _warned(tmp_path: Path, body: str) -> bool:
    return ID in shown_ids(tmp_path, TEMPLATE.format(body=body))


@pytest.mark.parametrize("case", QUIET, ids=list(QUIET))
def test_save_to_the_loop_items_own_path_is_quiet(tmp_path, case):
    assert not _warned(tmp_path, QUIET[case])


@pytest.mark.parametrize("case", LOUD, ids=list(LOUD))
def test_one_shared_file_rewritten_per_item_still_warns(tmp_path, case):
    assert _warned(tmp_path, LOUD[case])
