"""Precision on real correct files (issue 11, scan-precision4): devices and loaders that only look unsharded.

* hardcoded-cuda0: a constant GPU bound to a name that the same function also binds to a rank-derived device is
  the one-process fallback (``args.device = "cuda:0"`` then ``if args.distributed: args.device = f"cuda:{rank}"``,
  the old timm ``train.py`` family; ``torch.device("cuda", 0)`` in the other arm of a per-rank pick, dlrm);
* missing-distributed-sampler: ``DataLoader(data, batch_size=None)`` turns automatic batching off: the dataset
  yields whole batches, a pipeline that splits the data by rank itself (wenet, webdataset, torchdata);
* detectron2's ``launch`` / ``DefaultTrainer`` run the training distributed (MaskFormer's ``train_net.py``).
The near misses keep their warnings."""

from __future__ import annotations

from pathlib import Path

from tests.scan.quality import shown_findings

DEVICE_SCRIPT = '''
import argparse
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    args = parser.parse_args()
    args.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
{pick}
    model = nn.Linear(8, 2).to(DEVICE)
    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        loss = model(torch.randn(4, 8, device=DEVICE)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''

FALLBACKS = [
    # a default overwritten on the distributed path (timm's old train.py, poolformer)
    ('    args.device = "cuda:0"\n    if args.distributed:\n        args.device = "cuda:%d" % args.local_rank\n'
     '        torch.cuda.set_device(args.local_rank)\n        dist.init_process_group("nccl")', "args.device"),
    # one arm per rank, the other the single-process pick (dlrm)
    ('    if args.distributed:\n        dist.init_process_group("nccl")\n'
     '        device = torch.device("cuda", args.local_rank)\n    else:\n        device = torch.device("cuda", 0)',
     "device"),
    # an f-string on the distributed path, a conditional fallback first
    ('    device = "cuda:0" if torch.cuda.is_available() else "cpu"\n    if dist.is_available() and args.distributed:\n'
     '        dist.init_process_group("nccl")\n        device = f"cuda:{args.local_rank}"', "device"),
]


def _hits(tmp_path: Path, code: str, ident: str) -> list:
    path = tmp_path / "train.py"
    path.write_text(code, encoding="utf-8")
    hits, facts = shown_findings([str(path)])
    assert facts["scan.uses_distributed"] is True
    return hits.get(ident, [])


def test_a_constant_gpu_with_a_per_rank_rebinding_is_the_one_process_fallback(tmp_path):
    for pick, name in FALLBACKS:
        code = DEVICE_SCRIPT.format(pick=pick).replace("DEVICE", name)
        assert _hits(tmp_path, code, "hardcoded-cuda0") == [], pick


def test_a_constant_gpu_never_rebound_per_rank_still_warns(tmp_path):
    near_misses = [
        ('    dist.init_process_group("nccl")\n    device = torch.device("cuda", 0)', "device"),
        ('    dist.init_process_group("nccl")\n    args.device = "cuda:0"', "args.device"),
        # the per-rank device is bound to another name: the constant one is still what the model gets
        ('    dist.init_process_group("nccl")\n    rank_device = f"cuda:{args.local_rank}"\n    device = "cuda:0"',
         "device"),
    ]
    for pick, name in near_misses:
        code = DEVICE_SCRIPT.format(pick=pick).replace("DEVICE", name)
        assert _hits(tmp_path, code, "hardcoded-cuda0"), pick


LOADER_SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from asr_pipeline import build_dataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    train_set = build_dataset("train.list", partition=True)
    train_loader = DataLoader({loader_args}, num_workers=4, persistent_workers=True)
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


def test_a_loader_without_automatic_batching_is_not_asked_for_a_sampler(tmp_path):
    for args in ("train_set, batch_size=None", "train_set, None", "dataset=train_set, batch_size=None, pin_memory=True"):
        assert _hits(tmp_path, LOADER_SCRIPT.format(loader_args=args), "missing-distributed-sampler") == [], args


def test_a_batching_loader_over_the_same_dataset_still_warns(tmp_path):
    for args in ("train_set, batch_size=16, shuffle=True", "train_set, 16", "train_set, batch_size=None or 16"):
        assert _hits(tmp_path, LOADER_SCRIPT.format(loader_args=args), "missing-distributed-sampler"), args


DETECTRON2_SCRIPT = '''
from detectron2.checkpoint import DetectionCheckpointer
from detectron2.config import get_cfg
from detectron2.engine import {trainer_import}, default_argument_parser, default_setup, launch


class Trainer({trainer}):
    @classmethod
    def build_evaluator(cls, cfg, dataset_name):
        return None


def main(args):
    cfg = get_cfg()
    cfg.merge_from_file(args.config_file)
    default_setup(cfg, args)
    trainer = Trainer(cfg)
    trainer.resume_or_load(resume=args.resume)
    return trainer.train()


if __name__ == "__main__":
    args = default_argument_parser().parse_args()
    {launch}
'''


def test_detectron2_launch_or_default_trainer_is_distributed_and_clean(tmp_path):
    spellings = [
        ("DefaultTrainer", "DefaultTrainer",
         "launch(main, args.num_gpus, num_machines=args.num_machines, dist_url=args.dist_url, args=(args,))"),
        ("DefaultTrainer", "DefaultTrainer", "main(args)"),  # the trainer alone (one process per GPU started outside)
        ("SimpleTrainer", "SimpleTrainer", "launch(main, args.num_gpus, args=(args,))"),  # launch alone
    ]
    for trainer_import, trainer, launch in spellings:
        path = tmp_path / "train_net.py"
        path.write_text(DETECTRON2_SCRIPT.format(trainer_import=trainer_import, trainer=trainer, launch=launch),
                        encoding="utf-8")
        hits, facts = shown_findings([str(path)])
        assert facts["scan.uses_distributed"] is True, launch
        assert hits == {}, (launch, hits)


def test_a_constant_device_handed_to_a_distributed_setup_call_is_its_default(tmp_path):
    """timm's train.py family: ``args.device = "cuda:0"`` then ``device = utils.init_distributed_device(args)``,
    which sets ``args.device`` per rank in a module the scan may not have."""
    for setup in ("device = utils.init_distributed_device(args)", "utils.init_distributed_mode(args)",
                  "setup_ddp(args)"):
        pick = f'    args.device = "cuda:0"\n    {setup}'
        code = DEVICE_SCRIPT.format(pick=pick).replace("DEVICE", "args.device").replace(
            "import torch\n", "import torch\nimport utils\nfrom utils import setup_ddp\n", 1)
        assert _hits(tmp_path, code, "hardcoded-cuda0") == [], setup
    for other in ("print_args(args)", "utils.init_distributed_mode(config)"):  # not a set-up, or not this object
        pick = f'    args.device = "cuda:0"\n    dist.init_process_group("nccl")\n    {other}'
        code = DEVICE_SCRIPT.format(pick=pick).replace("DEVICE", "args.device").replace(
            "import torch\n", "import torch\nimport utils\nfrom utils import print_args\n", 1)
        assert _hits(tmp_path, code, "hardcoded-cuda0"), other


def test_an_iterable_dataset_built_inline_is_not_asked_for_a_sampler(tmp_path):
    """OLMo's ``DataLoader(IterableDataset(dataset, batch_size, seed=...), batch_size=...)``: built in the call."""
    stream = "class Stream(torch.utils.data.IterableDataset):\n    pass\n\n\n"
    for args, extra in (("IterableDataset(train_set, 64, seed=1), batch_size=16", "from olmo.data import IterableDataset\n"),
                        ("Stream(), batch_size=16", stream),
                        ("data.StreamingIterableShards(train_set), batch_size=16", "import data\n")):
        code = LOADER_SCRIPT.format(loader_args=args).replace("\n\ndef main():", "\n" + extra + "\ndef main():", 1)
        assert _hits(tmp_path, code, "missing-distributed-sampler") == [], args
    code = LOADER_SCRIPT.format(loader_args="MapStyle(train_set), batch_size=16, shuffle=True").replace(
        "\n\ndef main():", "\nfrom data import MapStyle\n\ndef main():", 1)
    assert _hits(tmp_path, code, "missing-distributed-sampler")


ANNOTATED = '''
from typing import TYPE_CHECKING

import torch
{imports}
from myproject.distributed import make_accelerator

if TYPE_CHECKING:
    from accelerate import Accelerator


def update(model, batch, optimizer, accelerator{note}):
    loss = model(batch).mean()
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()


def main():
    accelerator = make_accelerator()
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.AdamW(model.parameters())
    loader = torch.utils.data.DataLoader(torch.randn(64, 8), batch_size=8, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        update(model, batch, optimizer, accelerator)


if __name__ == "__main__":
    main()
'''


def test_an_accelerator_built_by_a_factory_is_known_by_its_annotation(tmp_path):
    """lerobot's lerobot_train.py: the Accelerator comes from a factory in another package and is imported only
    under TYPE_CHECKING, for the annotations; the script runs under Accelerate (which shards the loader)."""
    path = tmp_path / "train.py"
    for imports, note in (("", ': "Accelerator"'), ("import accelerate", ": accelerate.Accelerator")):
        path.write_text(ANNOTATED.format(imports=imports, note=note), encoding="utf-8")
        hits, facts = shown_findings([str(path)])
        assert facts["scan.uses_distributed"] is True, note
        assert hits == {}, hits
    path.write_text(ANNOTATED.format(imports="", note=': "Optimizer"'), encoding="utf-8")
    assert shown_findings([str(path)])[1]["scan.uses_distributed"] is False  # nothing says how it runs
