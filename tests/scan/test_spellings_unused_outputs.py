"""unused-parameters-error when forward returns a tuple and every call of the DDP model throws one element away
(``logits, _ = model(x)``): the layers only that element uses get no gradient. Near misses: the element is kept,
stored as a side effect, one call keeps the whole tuple, or find_unused_parameters=True."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "unused-parameters-error"

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 8)
        self.head = nn.Linear(8, 2)
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        feats = self.backbone(x)
{body}


dist.init_process_group("nccl")
rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(rank)
model = DDP(Net().cuda(), device_ids=[rank]{options})
for step in range(10):
{loop}
'''

RETURN_BOTH = "        return self.head(feats), self.proj(feats)"
EMBED_THEN_RETURN = "        emb = self.proj(feats)\n        logits = self.head(feats)\n        return logits, emb"


@pytest.mark.parametrize("body, loop", [
    (RETURN_BOTH, "    logits, _ = model(torch.randn(2, 4).cuda())\n    logits.sum().backward()"),
    (EMBED_THEN_RETURN, "    logits, _emb = model(torch.randn(2, 4).cuda())\n    logits.sum().backward()"),
])
def test_discarded_output_leaves_its_layer_without_gradient(tmp_path, body, loop):
    assert ID in scan_ids(tmp_path, SCRIPT.format(body=body, loop=loop, options=""))


@pytest.mark.parametrize("body, loop, options", [
    (RETURN_BOTH, "    logits, emb = model(torch.randn(2, 4).cuda())\n    (logits.sum() + emb.sum()).backward()", ""),
    (RETURN_BOTH, "    out = model(torch.randn(2, 4).cuda())\n    out[0].sum().backward()", ""),  # the whole tuple
    ("        self.aux = self.proj(feats).pow(2).mean()\n        return self.head(feats), self.aux",
     "    logits, _ = model(torch.randn(2, 4).cuda())\n    (logits.sum() + model.module.aux).backward()", ""),
    (RETURN_BOTH, "    logits, _ = model(torch.randn(2, 4).cuda())\n    logits.sum().backward()",
     ", find_unused_parameters=True"),
])
def test_kept_or_declared_outputs_are_quiet(tmp_path, body, loop, options):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(body=body, loop=loop, options=options))
