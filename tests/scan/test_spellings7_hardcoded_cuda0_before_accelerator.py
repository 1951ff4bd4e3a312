"""hardcoded-cuda0 (session 7): a bare ``"cuda"`` placement that runs before Accelerate picks each process's GPU.

``Accelerator()`` (and ``PartialState()``) call ``torch.cuda.set_device(local_process_index)`` when built under a
multi-GPU launch; until then every process's current device is GPU 0, so ``model.cuda()`` / ``.to("cuda")`` /
``.to(torch.device("cuda"))`` earlier in the same function, or before a call that builds the Accelerator through a
local class or function (``Trainer(model)``), puts every process's copy on GPU 0
(lucidrains/denoising-diffusion-pytorch#146). Quiet after the Accelerator exists, on the CPU, with ``accelerator.device``,
and in scripts that never build one.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "hardcoded-cuda0"

SCRIPT = '''
import torch
import torch.nn as nn
from accelerate import Accelerator, PartialState


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x)


class Trainer:
    def __init__(self, model, lr=1e-3):
{init}
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.model, self.opt = self.accelerator.prepare(self.model, self.opt)

    def train(self, steps):
        for _ in range(steps):
            x = torch.randn(4, 8, device=self.accelerator.device)
            loss = self.model(x).sum()
            self.accelerator.backward(loss)
            self.opt.step()
            self.opt.zero_grad()


def make_accelerator():
    return Accelerator(mixed_precision="no")


def main():
{main}


if __name__ == "__main__":
    main()
'''

INIT_FIRST = "        self.accelerator = Accelerator()\n        self.model = model"
INIT_CUDA_FIRST = "        self.model = model.cuda()\n        self.accelerator = Accelerator()"
INIT_CUDA_AFTER = "        self.accelerator = Accelerator()\n        self.model = model.cuda()"


@pytest.mark.parametrize("init,main", [
    (INIT_FIRST, "    model = Net().cuda()\n    Trainer(model).train(10)"),                       # ddpm-pytorch#146
    (INIT_FIRST, "    model = Net().to('cuda')\n    trainer = Trainer(model)\n    trainer.train(10)"),
    (INIT_FIRST, "    device = torch.device('cuda')\n    model = Net().to(device)\n    Trainer(model).train(10)"),
    (INIT_CUDA_FIRST, "    Trainer(Net()).train(10)"),
    (INIT_FIRST, "    net = Net().cuda()\n    accelerator = make_accelerator()\n"
                 "    net = accelerator.prepare(net)"),
    (INIT_FIRST, "    net = Net().to(device='cuda')\n    state = PartialState()\n    print(state.device)"),
])
def test_placed_on_the_default_gpu_before_the_accelerator(tmp_path, init, main):
    assert ID in scan_ids(tmp_path, SCRIPT.format(init=init, main=main))


@pytest.mark.parametrize("init,main", [
    (INIT_FIRST, "    Trainer(Net()).train(10)"),
    (INIT_CUDA_AFTER, "    Trainer(Net()).train(10)"),
    (INIT_FIRST, "    accelerator = make_accelerator()\n    net = Net().cuda()\n    net = accelerator.prepare(net)"),
    (INIT_FIRST, "    accelerator = Accelerator()\n    net = Net().to(accelerator.device)"),
    (INIT_FIRST, "    net = Net().to('cpu')\n    Trainer(net).train(10)"),
    (INIT_FIRST, "    trainer = Trainer(Net())\n    trainer.train(10)\n    probe = Net().cuda()\n    print(probe)"),
])
def test_quiet_after_the_accelerator_or_with_its_device(tmp_path, init, main):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(init=init, main=main))


def test_quiet_without_an_accelerator(tmp_path):
    code = "import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(4, 4).cuda()\nprint(model(torch.randn(2, 4).cuda()))\n"
    assert ID not in scan_ids(tmp_path, code)
