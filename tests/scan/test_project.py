"""Project knowledge: a file is judged with what its local modules and the other scanned files tell."""

from __future__ import annotations

from pathlib import Path

from troubleshooter.scan import scan_paths

DDP_HEAD = """import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_setup_in_a_helper_module_makes_the_entry_distributed(tmp_path):
    root = _write(tmp_path, {
        "dist_util.py": DDP_HEAD + "def setup():\n    dist.init_process_group('nccl')\n",
        "train.py": "import torch\nfrom torch.utils.data import DataLoader\nimport dist_util\n"
                    "def main(data, model, opt):\n    dist_util.setup()\n"
                    "    loader = DataLoader(data, batch_size=8, shuffle=True)\n"
                    "    for x in loader:\n        model(x).sum().backward()\n        opt.step()\n"
                    "if __name__ == '__main__':\n    main(None, None, None)\n",
    })
    facts = scan_paths([str(root / "train.py")]).facts
    assert facts["scan.uses_distributed"] is True
    assert facts["scan.missing-distributed-sampler"], "the helper's set-up must not hide the entry's bug"


def test_print_silenced_by_a_helper_and_class_built_on_rank0_only(tmp_path):
    root = _write(tmp_path, {
        "utils.py": "import builtins\nfrom torch.utils.tensorboard import SummaryWriter\n"
                    "def setup_print(is_master):\n    builtin_print = builtins.print\n"
                    "    def print(*a, **k):\n        if is_master or k.pop('force', False):\n"
                    "            builtin_print(*a, **k)\n    builtins.print = print\n"
                    "class Logger:\n    def __init__(self, d):\n        self.writer = SummaryWriter(d)\n",
        "main.py": DDP_HEAD + "import utils\n"
                   "def main(model, loader, opt):\n    dist.init_process_group('nccl')\n"
                   "    utils.setup_print(dist.get_rank() == 0)\n    model = DDP(model)\n"
                   "    log = utils.Logger('runs') if dist.get_rank() == 0 else None\n"
                   "    for x in loader:\n        model(x).sum().backward()\n        opt.step()\n"
                   "        print('loss')\n"
                   "if __name__ == '__main__':\n    main(None, None, None)\n",
    })
    hits = scan_paths([str(root)]).hits
    assert "logging-from-all-ranks" not in hits, hits


def test_rank_passed_to_a_spawned_worker_and_a_class_is_a_rank(tmp_path):
    root = _write(tmp_path, {"train.py": DDP_HEAD + """import torch.multiprocessing as mp
class Trainer:
    def __init__(self, model, gpu_id):
        self.gpu_id = gpu_id
        self.model = DDP(model, device_ids=[gpu_id])
    def save(self):
        torch.save(self.model.module.state_dict(), "ckpt.pt")
    def train(self, loader, opt):
        for x in loader:
            self.model(x).sum().backward()
            opt.step()
        if self.gpu_id == 0:
            self.save()
def worker(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    Trainer(nn.Linear(2, 2), rank).train([], None)
if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
"""})
    hits = scan_paths([str(root)]).hits
    assert "logging-from-all-ranks" not in hits, hits


def test_code_in_a_function_nothing_calls_does_not_count(tmp_path):
    root = _write(tmp_path, {"train.py": DDP_HEAD + """from transformers import AutoModel
def unused_loader():
    return AutoModel.from_pretrained("bert-base-uncased")
def main():
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(2, 2))
if __name__ == "__main__":
    main()
"""})
    assert "hf-cache-contention" not in scan_paths([str(root)]).hits
    (root / "train.py").write_text((root / "train.py").read_text().replace(
        'DDP(nn.Linear(2, 2))', 'DDP(nn.Linear(2, 2))\n    unused_loader()'))
    assert "hf-cache-contention" in scan_paths([str(root)]).hits
