"""checkpoint-without-module through save helpers: the wrapper kept as ``self.model`` (bound in ``__init__`` only) and
handed from another method to a local function that saves ``model.state_dict()``, by position or by keyword; near
misses that must stay quiet: the helper gets ``.module``, the helper unwraps before saving."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "checkpoint-without-module"

SCRIPT = 'import os\nimport torch\nimport torch.distributed as dist\nimport torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nfrom torch.utils.data import DataLoader, TensorDataset\nfrom torch.utils.data.distributed import DistributedSampler\n\n\ndef is_main_process():\n    return dist.get_rank() == 0\n\n__HELPERS__\n\nclass Trainer:\n    def __init__(self, local_rank):\n        self.local_rank = local_rank\n        self.model = DDP(nn.Linear(8, 2).cuda(local_rank), device_ids=[local_rank])\n        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)\n\n__METHODS__\n\n    def fit(self, epochs=3):\n        data = TensorDataset(torch.randn(64, 8))\n        sampler = DistributedSampler(data)\n        for epoch in range(epochs):\n            sampler.set_epoch(epoch)\n            for (x,) in DataLoader(data, batch_size=8, sampler=sampler):\n                loss = self.model(x.cuda()).sum()\n                self.opt.zero_grad()\n                loss.backward()\n                self.opt.step()\n__AFTER__\n\n\ndef export_for_inference(path):\n    net = nn.Linear(8, 2)\n    net.load_state_dict(torch.load(path, map_location="cpu"))\n    return net\n\n\nif __name__ == "__main__":\n    local_rank = int(os.environ["LOCAL_RANK"])\n    torch.cuda.set_device(local_rank)\n    dist.init_process_group("nccl")\n    Trainer(local_rank).fit()\n    dist.destroy_process_group()\n'


def script(helpers: str, methods: str, after: str) -> str:
    return SCRIPT.replace("__HELPERS__\n", helpers).replace("__METHODS__\n", methods).replace("__AFTER__\n", after)


SAVE_FN = "def save_checkpoint(model, path):\n    torch.save(model.state_dict(), path)\n"
SAVE_KW = ("def save_checkpoint(path, model=None, optimizer=None):\n"
           "    torch.save({'model': model.state_dict(), 'opt': optimizer.state_dict()}, path)\n")
UNWRAP = ("def unwrap(m):\n    return m.module if hasattr(m, 'module') else m\n\n"
          "def save_checkpoint(model, path):\n    torch.save(unwrap(model).state_dict(), path)\n")


@pytest.mark.parametrize("helpers, methods, after", [
    (SAVE_FN, "", "            if is_main_process():\n                save_checkpoint(self.model, 'ckpt.pt')\n"),
    (SAVE_KW, "", "            if is_main_process():\n"
                  "                save_checkpoint('ckpt.pt', model=self.model, optimizer=self.opt)\n"),
    ("", "    def save(self, path):\n        if is_main_process():\n            torch.save(self.model.state_dict(), path)\n",
     "            self.save('ckpt.pt')\n"),
    ("", "", "            state = self.model.state_dict()\n            if is_main_process():\n"
             "                torch.save(state, 'ckpt.pt')\n"),
], ids=["helper-positional", "helper-keyword", "own-method", "state-variable"])
def test_wrapper_state_saved_through_a_helper(tmp_path, helpers, methods, after):
    assert ID in scan_ids(tmp_path, script(helpers, methods, after))


@pytest.mark.parametrize("helpers, after", [
    (SAVE_FN, "            if is_main_process():\n                save_checkpoint(self.model.module, 'ckpt.pt')\n"),
    (UNWRAP, "            if is_main_process():\n                save_checkpoint(self.model, 'ckpt.pt')\n"),
], ids=["hands-module", "helper-unwraps"])
def test_quiet_when_the_helper_gets_the_bare_model(tmp_path, helpers, after):
    assert ID not in scan_ids(tmp_path, script(helpers, "", after))
