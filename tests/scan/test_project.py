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


ENDLESS_SHARDS = """
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


class ShardDataset(Dataset):
    def __init__(self, items, shard, num_shards):
        self.items = items[shard:][::num_shards]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def load_data(items, batch_size):
    dataset = ShardDataset(items, shard=dist.get_rank(), num_shards=dist.get_world_size())
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=True)
    while True:
        yield from loader


def main(steps=100000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(64, 64).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = load_data(torch.randn(10007, 64), batch_size=32)
    for step in range(steps):
        batch = next(data).cuda()
        loss = (model(batch) - batch).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0 and step % 1000 == 0:
            print(f"step {step} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
"""


def test_rank_shards_feeding_an_endless_generator_are_not_uneven(tmp_path):
    """Each rank reads its own shard, but an endless ``while True: yield from loader`` never runs out."""
    path = tmp_path / "train.py"
    path.write_text(ENDLESS_SHARDS)
    assert "uneven-last-batch" not in scan_paths([str(path)]).hits
    path.write_text(ENDLESS_SHARDS.replace("    while True:\n        yield from loader\n",
                                           "    for _ in range(3):\n        yield from loader\n"))
    assert "uneven-last-batch" in scan_paths([str(path)]).hits


def test_stdout_redirect_silences_print(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(DDP_HEAD + """import sys
def main(model, loader, opt):
    dist.init_process_group("nccl")
    if dist.get_rank() != 0:
        sys.stdout = open(os.devnull, "w")
    model = DDP(model)
    for x in loader:
        model(x).sum().backward()
        opt.step()
        print("loss")
if __name__ == "__main__":
    main(None, None, None)
""")
    assert "logging-from-all-ranks" not in scan_paths([str(path)]).hits


HAND_WRITTEN_ACCELERATOR = """import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


class SimpleAccelerator:
    def __init__(self):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.device = torch.device("cuda", self.local_rank)

    def prepare(self, model):
        return DDP(model.to(self.device), device_ids=[self.local_rank])


def main():
    acc = SimpleAccelerator()
    model = acc.prepare(nn.Linear(10, 2))
    data = TensorDataset(torch.randn(1000, 10), torch.randint(0, 2, (1000,)))
    train_loader = DataLoader(data, batch_size=32, shuffle=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.to(acc.device)), y.to(acc.device))
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
"""

RANDOM_SAMPLER = """import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, RandomSampler, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(10, 2).cuda(), device_ids=[local_rank])
    data = TensorDataset(torch.randn(1000, 10), torch.randint(0, 2, (1000,)))
    loader = DataLoader(data, batch_size=32, sampler=RandomSampler(data))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
"""


def test_a_hand_written_accelerator_class_does_not_shard_loaders(tmp_path):
    """Its prepare() wraps the model in DDP: the loader still needs a DistributedSampler, whether prepare() never
    sees it or takes it and hands it back unchanged; a prepare() that rebuilds it with one (here through a helper
    method) shards it."""
    path = tmp_path / "train.py"
    path.write_text(HAND_WRITTEN_ACCELERATOR)
    assert "missing-distributed-sampler" in scan_paths([str(path)]).hits
    takes_loader = (HAND_WRITTEN_ACCELERATOR.replace("def prepare(self, model):", "def prepare(self, model, loader):")
                    .replace("acc.prepare(nn.Linear(10, 2))", "acc.prepare(nn.Linear(10, 2), train_loader)"))
    path.write_text(takes_loader)
    assert "missing-distributed-sampler" in scan_paths([str(path)]).hits
    path.write_text(takes_loader.replace(
        "        return DDP(model.to(self.device), device_ids=[self.local_rank])",
        "        self.loader = self._shard(loader)\n"
        "        return DDP(model.to(self.device), device_ids=[self.local_rank])\n\n"
        "    def _shard(self, loader):\n"
        "        sampler = torch.utils.data.distributed.DistributedSampler(loader.dataset)\n"
        "        return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=sampler)").replace(
        "for x, y in train_loader:", "for x, y in acc.loader:"))
    assert "missing-distributed-sampler" not in scan_paths([str(path)]).hits


def test_a_single_process_random_sampler_is_not_a_distributed_one(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(RANDOM_SAMPLER)
    assert "missing-distributed-sampler" in scan_paths([str(path)]).hits
    path.write_text(RANDOM_SAMPLER.replace("sampler=RandomSampler(data))", "sampler=sampler)").replace(
        "    loader = DataLoader(", "    if dist.is_initialized():\n        sampler = DistributedSampler(data)\n"
        "    else:\n        sampler = RandomSampler(data)\n    loader = DataLoader(").replace(
        "from torch.utils.data import", "from torch.utils.data import DistributedSampler,"))
    assert "missing-distributed-sampler" not in scan_paths([str(path)]).hits



def test_a_collective_after_an_exit_on_the_ranks_own_data(tmp_path):
    """``if not local_metrics: return {}`` before all_gather_object: ranks with nothing leave the others waiting."""
    path = tmp_path / "train.py"
    body = DDP_HEAD + """def gather_metrics(local_metrics):
    if not local_metrics:
        return {}
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, local_metrics)
    return out
def main():
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(2, 2))
    gather_metrics({"loss": 1.0})
if __name__ == "__main__":
    main()
"""
    path.write_text(body)
    assert "collective-mismatch" in scan_paths([str(path)]).hits
    path.write_text(body.replace("if not local_metrics:", "if dist.get_world_size() == 1:"))
    assert "collective-mismatch" not in scan_paths([str(path)]).hits


LOGGING_ENTRY = DDP_HEAD + """import logging
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tools import log_setup
logger = logging.getLogger("train")
def main(data):
    dist.init_process_group("nccl")
    log_setup.configure(logging.INFO)
    model = DDP(nn.Linear(4, 2).cuda())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sampler = DistributedSampler(data)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x in DataLoader(data, batch_size=8, sampler=sampler):
            model(x).sum().backward()
            opt.step()
            logger.info("step done")
if __name__ == "__main__":
    main(None)
"""


def test_logging_set_up_per_rank_by_condition_in_another_module(tmp_path):
    """dinov2 (``if distributed.is_main_process(): handler = StreamHandler(...)``) and mmf (``if rank == 0:
    logger.setLevel(level)``) choose in their logging module which ranks write to the console."""
    spellings = {
        "main_process_handler": "import logging, sys\nfrom tools import distributed\n"
                                "def configure(level):\n    logger = logging.getLogger()\n"
                                "    if distributed.is_main_process():\n"
                                "        handler = logging.StreamHandler(stream=sys.stdout)\n"
                                "        logger.addHandler(handler)\n",
        "rank_zero_level": "import logging\nimport torch.distributed as dist\n"
                           "def configure(level):\n    distributed_rank = dist.get_rank()\n"
                           "    if distributed_rank == 0:\n        logging.getLogger().setLevel(level)\n",
    }
    for name, module in spellings.items():
        root = _write(tmp_path / name, {"train.py": LOGGING_ENTRY, "tools/__init__.py": "", "tools/log_setup.py": module,
                                        "tools/distributed.py": "import torch.distributed as dist\n"
                                        "def is_main_process():\n    return dist.get_rank() == 0\n"})
        hits = scan_paths([str(root)]).hits
        assert "logging-from-all-ranks" not in hits, (name, hits.get("logging-from-all-ranks"))
    root = _write(tmp_path / "same_on_every_rank", {
        "train.py": LOGGING_ENTRY, "tools/__init__.py": "",
        "tools/log_setup.py": "import logging\ndef configure(level):\n    if level is not None:\n"
                              "        logging.getLogger().setLevel(level)\n"})
    assert scan_paths([str(root)]).hits["logging-from-all-ranks"]


def test_a_scan_pauses_the_cyclic_collector_and_restores_it(tmp_path):
    import gc

    root = _write(tmp_path, {"train.py": LOGGING_ENTRY})
    assert gc.isenabled()
    assert scan_paths([str(root)]).facts["scan.files"] == 1
    assert gc.isenabled()
    gc.disable()
    try:
        scan_paths([str(root)])
        assert not gc.isenabled()
    finally:
        gc.enable()


TRAIN_WITH_HELPER_SETUP = ("import torch\nfrom torch.utils.data import DataLoader\nimport dist_util\n"
                           "def main(data, model, opt):\n    dist_util.setup()\n"
                           "    loader = DataLoader(data, batch_size=8, shuffle=True)\n"
                           "    for x in loader:\n        model(x).sum().backward()\n        opt.step()\n"
                           "if __name__ == '__main__':\n    main(None, None, None)\n")


def test_a_file_whose_setup_is_in_an_unscanned_helper_stays_on_the_distributed_path(tmp_path):
    root = _write(tmp_path, {
        "dist_util.py": DDP_HEAD + "def setup():\n    dist.init_process_group('nccl')\n",
        "train.py": TRAIN_WITH_HELPER_SETUP,
        "other.py": DDP_HEAD + "model = DDP(nn.Linear(2, 2))\n",
    })
    facts = scan_paths([str(root / "train.py"), str(root / "other.py")]).facts
    assert facts["scan.missing-distributed-sampler"], "another distributed file must not push train.py off the path"


def test_a_standalone_tool_beside_a_trainer_is_judged_on_its_own(tmp_path):
    root = _write(tmp_path, {
        "dist_util.py": DDP_HEAD + "def setup():\n    dist.init_process_group('nccl')\n",
        "train.py": TRAIN_WITH_HELPER_SETUP,
        "tools/convert.py": "import torch\n# converts a DistributedDataParallel checkpoint\n"
                            "def convert(src, dst):\n    torch.save(torch.load(src), dst)\n"
                            "if __name__ == '__main__':\n    convert('a.pth', 'b.pth')\n",
    })
    facts = scan_paths([str(root)]).facts
    assert facts["scan.uses_distributed"] is True and facts["scan.missing-distributed-sampler"]
    assert not facts["scan.logging-from-all-ranks"], "a single-process tool's torch.save is not a per-rank write"


def _project_with(tmp_path, overlay: str | None):
    from troubleshooter.core.ruleset import load_rules
    from troubleshooter.scan.patterns import patterns_for
    from troubleshooter.scan.project import Project

    extra = []
    if overlay is not None:
        (tmp_path / "scan").mkdir(parents=True)
        (tmp_path / "scan" / "extra.yaml").write_text(overlay)
        extra = [tmp_path]
    return Project(patterns_for(load_rules(extra, only=("scan",))))


LAYER = b"import torch.nn as nn\n\nclass Block(nn.Module):\n    def forward(self, x):\n        return x\n"


def test_what_makes_a_module_worth_summarising_comes_from_the_rule_files(tmp_path):
    shipped = _project_with(tmp_path / "a", None)
    assert not shipped.relevant(LAYER)  # a layer definition tells the project nothing
    for words in (b"dist.init_process_group('nccl')", b"if args.distributed:", b"from accelerate import Accelerator",
                  b"if utils.is_primary(args):", b"LOCAL_RANK = int(os.environ['LOCAL_RANK'])",
                  b"misc.setup_for_distributed(is_master)", b"builtins.print = print_on_rank0"):
        assert shipped.relevant(LAYER + words), words
    assert not shipped.relevant(LAYER + b"from myfw import Runner\nif am_i_the_boss(): pass\n")
    grown = _project_with(tmp_path / "b", (
        "frameworks:\n  myfw:\n    entry: [myfw.Runner]\n    handles: [missing-set-epoch]\n"
        "main_process_patterns: ['^am_i_(the_)?boss$']\n"))
    assert grown.relevant(LAYER + b"from myfw import Runner\n")  # a framework added in YAML only
    assert grown.relevant(LAYER + b"if am_i_boss(): pass\n")  # a main-process pattern added in YAML only
    assert not grown.relevant(LAYER)
    open_ended = _project_with(tmp_path / "c", "rank_name_patterns: ['^worker_\\w+_index$']\n")
    assert open_ended.relevant(LAYER)  # no word every match contains: no pre-filter, every module is summarised


def test_file_lookups_belong_to_one_scan(tmp_path):
    """A helper module created between two scans is found by the second one (no lookup outlives its scan), and a
    file scanned alone in the middle of a directory scan does not reset the directory scan's lookups."""
    train = ("import torch\nfrom torch.utils.data import DataLoader\nimport dist_util\n"
             "def main(data, model, opt):\n    dist_util.setup()\n"
             "    loader = DataLoader(data, batch_size=8, shuffle=True)\n"
             "    for x in loader:\n        model(x).sum().backward()\n        opt.step()\n"
             "if __name__ == '__main__':\n    main(None, None, None)\n")
    root = _write(tmp_path, {"train.py": train})
    assert scan_paths([str(root / "train.py")]).facts["scan.uses_distributed"] is False
    _write(tmp_path, {"dist_util.py": DDP_HEAD + "def setup():\n    dist.init_process_group('nccl')\n"})
    facts = scan_paths([str(root / "train.py")]).facts
    assert facts["scan.uses_distributed"] is True and facts["scan.missing-distributed-sampler"]

    from troubleshooter.scan import shipped_patterns
    from troubleshooter.scan.project import Project
    from troubleshooter.scan.runner import FileScanner
    from troubleshooter.scan.checkers import all_checkers

    project = Project(shipped_patterns())
    key = project.key(str(root / "train.py"))
    lookups = dict(project.files._real)
    FileScanner(all_checkers(), shipped_patterns()).scan(str(root / "dist_util.py"), (root / "dist_util.py").read_bytes())
    assert project.files._real == lookups and project.key(str(root / "train.py")) == key
