"""unused-parameters-error spellings (scan-recall7b, second session): a file that only READS ``requires_grad``
(an optimizer built over ``[p for p in model.parameters() if p.requires_grad]``, a gradient-norm loop) used to silence
the whole checker, since frozen layers are legitimately unused. Now a layer is excused only when a freeze of the file
reaches it: ``self.aux.requires_grad_(False)``, ``p.requires_grad = False`` over ``net.aux.parameters()``, a
``freeze(module)`` helper called as ``freeze(net.aux)``, a loop over named parameters picking ``"aux"`` by name,
``nn.Parameter(..., requires_grad=False)``. A freeze of another part leaves the unused layer flagged; a freeze whose
target cannot be read (a negated name test, the whole wrapped model, a list built elsewhere) keeps the checker quiet.
Also the model class found through ``net = Net(); DDP(net.cuda())`` and a local factory (``build_model()``)."""

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
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(16, 16)
        self.head = nn.Linear(16, 4)
        self.aux = nn.Linear(16, 4)
{init}

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


def freeze(module):
    for p in module.parameters():
        p.requires_grad = False


def build_model():
    model = Net()
    return model


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
{build}
    optimizer = torch.optim.AdamW({params}, lr=1e-3)
    data = TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''

WRAP = "    net = Net().cuda()\n{freeze}\n    model = DDP(net, device_ids=[local_rank])"
READ = "[p for p in model.parameters() if p.requires_grad]"
PLAIN = "model.parameters()"


def script(freeze: str = "", init: str = "", params: str = READ, build: str | None = None) -> str:
    body = build if build is not None else WRAP.format(freeze="\n".join("    " + line for line in freeze.splitlines()))
    return SCRIPT.format(init=init, params=params, build=body)


POSITIVE = {
    "optimizer-filter-read": script(),
    "filter-lambda-read": script(params="filter(lambda p: p.requires_grad, model.parameters())"),
    "grad-norm-read": script(freeze="print(sum(p.numel() for p in net.parameters() if p.requires_grad))"),
    "other-part-frozen-loop": script(freeze="for p in net.body.parameters():\n    p.requires_grad = False"),
    "other-part-frozen-helper": script(freeze="freeze(net.body)"),
    "other-part-frozen-method": script(freeze="net.body.requires_grad_(False)"),
    "other-part-frozen-by-name": script(
        freeze='for name, p in net.named_parameters():\n    if name.startswith("body."):\n        p.requires_grad = False'),
    "teacher-frozen-whole": script(freeze="teacher = Net().cuda()\nteacher.requires_grad_(False)"),
    "unfreeze-only": script(freeze="for p in net.aux.parameters():\n    p.requires_grad = True"),
    "bound-then-moved": script(params=PLAIN, build="    net = Net()\n    model = DDP(net.cuda(), device_ids=[local_rank])"),
    "local-factory": script(params=PLAIN, build="    model = DDP(build_model().cuda(), device_ids=[local_rank])"),
    "local-factory-bound": script(params=PLAIN, build="    model = build_model().to(local_rank)\n"
                                                      "    model = DDP(model, device_ids=[local_rank])"),
}

QUIET = {
    "unused-part-frozen-loop": script(freeze="for p in net.aux.parameters():\n    p.requires_grad = False"),
    "unused-part-frozen-helper": script(freeze="freeze(net.aux)"),
    "unused-part-frozen-method": script(freeze="net.aux.requires_grad_(False)"),
    "unused-part-frozen-in-init": script(init="        self.aux.requires_grad_(False)"),
    "unused-part-frozen-comprehension": script(freeze="[p.requires_grad_(False) for p in net.aux.parameters()]"),
    "unused-part-frozen-by-name": script(
        freeze='for name, p in net.named_parameters():\n    if "aux" in name:\n        p.requires_grad = False'),
    "negated-name-test": script(
        freeze='for name, p in net.named_parameters():\n    if not name.startswith("head"):\n        p.requires_grad = False'),
    "frozen-list-built-elsewhere": script(
        freeze="frozen = [net.aux, net.body]\nfor layer in frozen:\n    layer.requires_grad_(False)"),
    "whole-model-frozen": script(freeze="for p in net.parameters():\n    p.requires_grad = False"),
    "frozen-by-variable-flag": script(freeze="train_aux = False\nnet.aux.requires_grad_(train_aux)"),
    "find-unused-parameters": script(build="    model = DDP(Net().cuda(), device_ids=[local_rank], "
                                           "find_unused_parameters=True)"),
}

QUIET_ALL_USED = {
    "factory-all-used": script(params=PLAIN, build="    model = DDP(build_model().cuda(), device_ids=[local_rank])")
    .replace("return self.head(torch.relu(self.body(x)))", "return self.head(torch.relu(self.body(x))) + self.aux(x)"),
    "bound-then-moved-all-used": script(params=PLAIN, build="    net = Net()\n    model = DDP(net.cuda(), "
                                                          "device_ids=[local_rank])")
    .replace("return self.head(torch.relu(self.body(x)))", "return self.head(torch.relu(self.body(x))) + self.aux(x)"),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_unused_layer_found_past_requires_grad_reads(tmp_path, name):
    assert ID in scan_ids(tmp_path, POSITIVE[name])


@pytest.mark.parametrize("name", sorted(QUIET))
def test_frozen_or_unreadable_freezes_stay_quiet(tmp_path, name):
    assert ID not in scan_ids(tmp_path, QUIET[name])


@pytest.mark.parametrize("name", sorted(QUIET_ALL_USED))
def test_class_found_through_bindings_all_used_is_quiet(tmp_path, name):
    assert ID not in scan_ids(tmp_path, QUIET_ALL_USED[name])


FORWARD = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Linear(16, 16)
        self.exit1 = nn.Linear(16, 4)
        self.stage2 = nn.Linear(16, 4)

    def forward(self, x):
{body}


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(Net().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(100):
        x, y = torch.randn(8, 16).cuda(), torch.randint(0, 4, (8,)).cuda()
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''


def forward(body: str) -> str:
    return FORWARD.format(body="\n".join("        " + line for line in body.strip("\n").splitlines()))


DERIVED_POSITIVE = {
    "early-exit-on-confidence": '''
h = self.stage1(x)
early = self.exit1(h)
if early.softmax(-1).max() > 0.9:
    return early
return self.stage2(h)
''',
    "branch-on-derived-norm": '''
h = torch.relu(self.stage1(x))
out = self.exit1(h)
score = h.norm(dim=-1).mean()
if score > 1.0:
    out = out + self.stage2(h)
return out
''',
    "augmented-derived": '''
h = self.stage1(x)
h += 1
if h.max() < 0:
    return self.exit1(h)
return self.exit1(h) + self.stage2(h)
''',
}

DERIVED_QUIET = {
    "derived-used-both-arms": '''
h = self.stage1(x)
if h.max() > 0:
    return self.exit1(h) + self.stage2(h)
return self.stage2(h) - self.exit1(h)
''',
    "input-test-if-else-both-arms": '''
h = self.stage1(x)
if x.sum() > 0:
    out = self.exit1(h) + self.stage2(h)
else:
    out = self.exit1(-h) + self.stage2(-h)
return out
''',
    "training-flag-only": '''
h = self.stage1(x)
out = self.exit1(h) + self.stage2(h)
if self.training:
    out = out * 2
return out
''',
    "derived-test-before-any-layer-use": '''
h = self.stage1(x)
scale = 2.0 if h.mean() > 0 else 1.0
return (self.exit1(h) + self.stage2(h)) * scale
''',
}


@pytest.mark.parametrize("name", sorted(DERIVED_POSITIVE))
def test_branch_on_a_value_computed_from_the_batch(tmp_path, name):
    assert ID in scan_ids(tmp_path, forward(DERIVED_POSITIVE[name]))


@pytest.mark.parametrize("name", sorted(DERIVED_QUIET))
def test_every_layer_used_whatever_the_batch(tmp_path, name):
    assert ID not in scan_ids(tmp_path, forward(DERIVED_QUIET[name]))
