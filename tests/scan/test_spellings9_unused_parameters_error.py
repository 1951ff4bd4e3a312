"""unused-parameters-error spellings (scan-recall7b, session 9).

A layer built by a local factory (a module-level ``conv_block(...)``, a method ``self._make_layer(...)``, a factory
calling another) that forward never runs (NK-CS-ZZL/IAN#9: ``bottleneck2``/``bottleneck3`` built and only
``bottleneck1`` used); and a forward output kept by the caller but outside the loss it calls backward on (``loss,
logits = model(x)``; ``loss.backward()``; logits only printed as an accuracy: facebookresearch/VICRegL#10). Near misses
that stay quiet: every factory-built layer used, a factory that builds no parameters, the kept output in the loss, a
backward in another function (cannot tell), and find_unused_parameters=True (checked with torch 2.13 on gloo: the
reducer marks the parameters that got no gradient in the backward as unused, so a discarded output no longer fails).
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "unused-parameters-error"

SCRIPT = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU())


def stage(cin, cout):
    return nn.Sequential(conv_block(cin, cout), conv_block(cout, cout))


def activation():
    return nn.Sequential(nn.ReLU(), nn.Dropout(0.1))


{model}


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(Net().cuda(), device_ids=[local_rank]{options})
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(64, 3, 16, 16), torch.randint(0, 10, (64,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
{step}
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

PLAIN_STEP = "loss = F.cross_entropy(model(x), y)"


def _script(model: str, step: str = PLAIN_STEP, options: str = "") -> str:
    step = "\n".join("            " + line for line in step.strip().splitlines())
    return SCRIPT.format(model=model.strip(), step=step, options=options)


FACTORY_UNUSED = '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = conv_block(3, 16)
        self.bottleneck1 = conv_block(16, 16)
        self.bottleneck2 = conv_block(16, 16)
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        h = self.bottleneck1(self.enc(x))
        return self.head(h.mean((2, 3)))
'''

METHOD_FACTORY_UNUSED = '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = self._make_layer(3, 16)
        self.layer2 = self._make_layer(16, 32)
        self.layer3 = self._make_layer(32, 32)
        self.fc = nn.Linear(32, 10)

    def _make_layer(self, cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())

    def forward(self, x):
        return self.fc(self.layer2(self.layer1(x)).mean((2, 3)))
'''

NESTED_FACTORY_UNUSED = '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = stage(3, 16)
        self.refine = stage(16, 16)
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.stem(x).mean((2, 3)))
'''

TWO_OUTPUTS = '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = conv_block(3, 16)
        self.projector = nn.Linear(16, 32)
        self.classifier = nn.Linear(16, 10)

    def forward(self, x):
        rep = self.backbone(x).mean((2, 3))
        z = self.projector(rep)
        loss = z.pow(2).mean()
        logits = self.classifier(rep.detach())
        return loss, logits
'''

FACTORY_ALL_USED = '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = conv_block(3, 16)
        self.mid = self._make_mid(16)
        self.head = nn.Linear(16, 10)

    def _make_mid(self, c):
        return nn.Sequential(nn.Conv2d(c, c, 1), nn.ReLU())

    def forward(self, x):
        return self.head(self.mid(self.enc(x)).mean((2, 3)))
'''

FACTORY_WITHOUT_PARAMETERS = '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = conv_block(3, 16)
        self.act = activation()
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.enc(x).mean((2, 3)))
'''

WARN = {
    "factory_function_layer_never_used": (FACTORY_UNUSED, PLAIN_STEP, ""),
    "method_factory_layer_never_used": (METHOD_FACTORY_UNUSED, PLAIN_STEP, ""),
    "nested_factory_layer_never_used": (NESTED_FACTORY_UNUSED, PLAIN_STEP, ""),
    "logits_kept_for_accuracy_only": (TWO_OUTPUTS, """
loss, logits = model(x)
acc = (logits.argmax(1) == y).float().mean()
""", ""),
}

QUIET = {
    "factory_layers_all_used": (FACTORY_ALL_USED, PLAIN_STEP, ""),
    "factory_without_parameters_unused": (FACTORY_WITHOUT_PARAMETERS, PLAIN_STEP, ""),
    "logits_in_the_loss": (TWO_OUTPUTS, """
ssl_loss, logits = model(x)
loss = ssl_loss + F.cross_entropy(logits, y)
""", ""),
    "logits_in_the_loss_find_unused_true": (TWO_OUTPUTS, """
ssl_loss, logits = model(x)
loss = ssl_loss + F.cross_entropy(logits, y)
""", ", find_unused_parameters=True"),
    "unused_factory_layer_with_find_unused_true": (FACTORY_UNUSED, PLAIN_STEP, ", find_unused_parameters=True"),
    "logits_kept_for_accuracy_find_unused_true": (TWO_OUTPUTS, """
loss, logits = model(x)
acc = (logits.argmax(1) == y).float().mean()
""", ", find_unused_parameters=True"),
}


@pytest.mark.parametrize("name", sorted(WARN))
def test_unused_factory_layers_and_outputs_outside_the_loss_warn(tmp_path, name):
    assert ID in scan_ids(tmp_path, _script(*WARN[name]))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_used_layers_and_outputs_in_the_loss_stay_quiet(tmp_path, name):
    assert ID not in scan_ids(tmp_path, _script(*QUIET[name]))


def test_output_kept_and_backward_elsewhere_stays_quiet(tmp_path):
    """The caller returns the kept output to a function that runs the backward: where it goes is not read."""
    code = _script(TWO_OUTPUTS, "loss, logits = model(x)").replace(
        "            loss, logits = model(x)\n            optimizer.zero_grad()\n            loss.backward()\n",
        "            loss = step(model, x, y)\n            optimizer.zero_grad()\n            loss.backward()\n")
    code = code.replace("def main():", "def step(model, x, y):\n    loss, logits = model(x)\n    print(logits.shape)\n    return loss\n\n\n"
                        "def main():")
    assert ID not in scan_ids(tmp_path, code)


# --- outputs a dict or a list carries, and the training-only tuple -------------------------------------------------

HEADS = '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = conv_block(3, 16)
        self.cls = nn.Linear(16, 10)
        self.aux = nn.Linear(16, 10)

    def forward(self, x):
        h = self.body(x).mean((2, 3))
{ret}
'''


def _heads(ret: str) -> str:
    return HEADS.format(ret="\n".join("        " + line for line in ret.strip("\n").splitlines()))


DICT_OUT = _heads('return {"logits": self.cls(h), "aux_logits": self.aux(h)}')
LIST_OUT = _heads("return [self.cls(h), self.aux(h)]")
TRAINING_TUPLE = _heads("""
if self.training:
    return self.cls(h), self.aux(h)
return self.cls(h)
""")

OUTPUT_WARN = {
    "dict_key_never_read_by_the_loss": (DICT_OUT, 'out = model(x)\nloss = F.cross_entropy(out["logits"], y)'),
    "list_item_never_read_by_the_loss": (LIST_OUT, "outputs = model(x)\nloss = F.cross_entropy(outputs[0], y)"),
    "training_tuple_second_kept_apart": (TRAINING_TUPLE, "logits, aux = model(x)\nloss = F.cross_entropy(logits, y)"),
}

OUTPUT_QUIET = {
    "dict_both_keys_in_the_loss": (DICT_OUT, 'out = model(x)\nloss = F.cross_entropy(out["logits"], y) + '
                                             '0.4 * F.cross_entropy(out["aux_logits"], y)'),
    "dict_passed_whole_to_a_criterion": (DICT_OUT, "out = model(x)\nloss = criterion(out, y)"),
    "list_both_items_in_the_loss": (LIST_OUT, "a, b = model(x)\nloss = F.cross_entropy(a, y) + F.cross_entropy(b, y)"),
    "training_tuple_both_in_the_loss": (TRAINING_TUPLE, "logits, aux = model(x)\n"
                                                        "loss = F.cross_entropy(logits, y) + 0.3 * F.cross_entropy(aux, y)"),
}


@pytest.mark.parametrize("name", sorted(OUTPUT_WARN))
def test_dict_list_and_training_outputs_outside_the_loss_warn(tmp_path, name):
    assert ID in scan_ids(tmp_path, _script(*OUTPUT_WARN[name]))


@pytest.mark.parametrize("name", sorted(OUTPUT_QUIET))
def test_dict_list_and_training_outputs_in_the_loss_stay_quiet(tmp_path, name):
    assert ID not in scan_ids(tmp_path, _script(*OUTPUT_QUIET[name]))


# --- the model kept on a trainer object, and static_graph ----------------------------------------------------------

TRAINER = '''
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Flow(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.step = nn.Linear(c, c)

    def forward(self, x):
        return x + self.step(x)


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(16, 16)
        self.head = nn.Linear(16, 4)
        self.flow_model = Flow(16)

    def forward(self, x):
        return self.head(self.backbone(x))


class Trainer:
    def __init__(self, local_rank):
        self.local_rank = local_rank
        self.model = {built}

    def setup(self):
        dist.init_process_group("nccl")
        torch.cuda.set_device(self.local_rank)
        self.model = nn.parallel.DistributedDataParallel(self.model, device_ids=[self.local_rank]{options})
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)

    def train(self):
        self.setup()
        for step in range(100):
            x, y = torch.randn(8, 16).cuda(), torch.randint(0, 4, (8,)).cuda()
            loss = F.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


if __name__ == "__main__":
    Trainer(int(os.environ["LOCAL_RANK"])).train()
'''


@pytest.mark.parametrize("built, options, warns", [
    ("Detector().cuda()", "", True),
    ("Detector().to(torch.device('cuda', local_rank))", "", True),
    ("Detector().cuda()", ", static_graph=True", False),
    ("Detector().cuda()", ", static_graph=bool(os.environ.get('COMPILE'))", False),
    ("Detector().cuda()", ", find_unused_parameters=True", False),
    ("Flow(16).cuda()", "", False),
])
def test_model_bound_on_a_trainer_in_another_method(tmp_path, built, options, warns):
    code = TRAINER.format(built=built, options=options)
    assert (ID in scan_ids(tmp_path, code)) is warns


# --- a layer used only under a switch the constructor leaves off, spelled as a comparison ---------------------------

SWITCHED = '''
class Net(nn.Module):
    def __init__(self, aux_weight=0.0, num_aux=None):
        super().__init__()
        self.body = conv_block(3, 16)
        self.cls = nn.Linear(16, 10)
        self.aux = nn.Linear(16, 10)
        self.aux_weight = aux_weight
        self.num_aux = num_aux

    def forward(self, x):
        h = self.body(x).mean((2, 3))
        out = self.cls(h)
        if {test}:
            out = out + self.aux(h)
        return out
'''


@pytest.mark.parametrize("test, built, warns", [
    ("self.aux_weight > 0", "Net()", True),
    ("self.aux_weight != 0", "Net()", True),
    ("self.num_aux is not None", "Net()", True),
    ("self.aux_weight > 0", "Net(aux_weight=0.4)", False),
    ("self.num_aux is not None", "Net(num_aux=2)", False),
    ("self.aux_weight > 0.5", "Net()", False),
    ("self.num_aux is None", "Net()", False),
])
def test_layer_behind_a_switch_left_off(tmp_path, test, built, warns):
    code = _script(SWITCHED.format(test=test)).replace("DDP(Net().cuda()", f"DDP({built}.cuda()")
    assert (ID in scan_ids(tmp_path, code)) is warns
