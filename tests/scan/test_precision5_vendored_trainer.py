"""A project's own copy of a framework's trainer does what the framework does (issue 11, scan-precision5).

ChatGLM-6B keeps transformers' Trainer in ``ptuning/trainer.py`` to patch a few methods. The copy wraps the model in
DDP itself, which made the whole project "raw DDP": the Trainer's own ``IterableDatasetShard`` loaders read as
hand-split data (six ``uneven-last-batch``) and the entry point's Hub loads as unguarded raw-DDP loads
(``hf-cache-contention``). A module that defines a class named like a framework's entry class and imports the
framework's own internals (``vendored_from`` in ``rules/scan/frameworks.yaml``) is that framework's code: the
project runs through the framework. A hand-written ``Trainer`` class that only uses the library's models is not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.quality import shown_findings

VENDORED = '''
import torch
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
{imports}


class {name}:
    def __init__(self, model, args, train_dataset):
        self.model, self.args, self.train_dataset = model, args, train_dataset

    def get_train_dataloader(self):
        shard = IterableDatasetShard(self.train_dataset, batch_size=8, num_processes=self.args.world_size,
                                     process_index=self.args.process_index)
        return DataLoader(shard, batch_size=8)

    def train(self):
        model = DistributedDataParallel(self.model.to(self.args.device), device_ids=[self.args.local_rank])
        optimizer = torch.optim.AdamW(model.parameters())
        for batch in self.get_train_dataloader():
            loss = model(**batch).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
'''

ENTRY = '''
from transformers import AutoModelForCausalLM, HfArgumentParser, TrainingArguments

from trainer import {name}


def main():
    (args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    {name}(model, args, list(range(100))).train()


if __name__ == "__main__":
    main()
'''

INTERNALS = {
    "pt_utils": "from transformers.trainer_pt_utils import IterableDatasetShard",
    "callback_and_pt_utils": "from transformers.trainer_callback import TrainerState\n"
                             "from transformers.trainer_pt_utils import IterableDatasetShard, nested_concat",
    "module_alias": "import transformers.trainer_callback as callbacks\n"
                    "from transformers.trainer_pt_utils import IterableDatasetShard",
}


def _scan(tmp_path: Path, trainer: str, entry: str) -> tuple[dict, bool]:
    (tmp_path / "trainer.py").write_text(trainer)
    (tmp_path / "main.py").write_text(entry)
    hits, facts = shown_findings([str(tmp_path)])
    return hits, facts["scan.uses_distributed"]


@pytest.mark.parametrize("name", ["Trainer", "Seq2SeqTrainer"])
@pytest.mark.parametrize("imports", INTERNALS.values(), ids=INTERNALS.keys())
def test_a_copy_of_the_hf_trainer_is_the_hf_trainer(tmp_path, imports, name):
    hits, distributed = _scan(tmp_path, VENDORED.format(imports=imports, name=name), ENTRY.format(name=name))
    assert hits == {}
    assert distributed


def test_the_copy_scanned_alone_is_the_framework_too(tmp_path):
    path = tmp_path / "trainer.py"
    path.write_text(VENDORED.format(imports=INTERNALS["pt_utils"], name="Trainer"))
    hits, _ = shown_findings([str(path)])
    assert "uneven-last-batch" not in hits


HAND_WRITTEN = '''
import torch
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
{imports}


class Trainer:
    def __init__(self, model, args, train_dataset):
        self.model, self.args, self.train_dataset = model, args, train_dataset

    def train(self):
        rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
        mine = self.train_dataset[rank::world]
        loader = DataLoader(mine, batch_size=8)
        model = DistributedDataParallel(self.model.to(rank), device_ids=[rank])
        optimizer = torch.optim.AdamW(model.parameters())
        for batch in loader:
            loss = model(batch).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
'''


@pytest.mark.parametrize("imports", [
    "from transformers import get_scheduler",                      # the library's helpers, not the Trainer's
    "from transformers.trainer_utils import set_seed",             # trainer_utils is user-facing: not a marker
    "",
])
def test_a_hand_written_trainer_class_stays_raw_ddp(tmp_path, imports):
    hits, distributed = _scan(tmp_path, HAND_WRITTEN.format(imports=imports), ENTRY.format(name="Trainer"))
    assert "uneven-last-batch" in hits
    assert distributed


def test_a_hand_written_trainer_class_named_otherwise_stays_raw_even_with_internals(tmp_path):
    trainer = HAND_WRITTEN.format(imports=INTERNALS["pt_utils"]).replace("class Trainer:", "class LoopRunner:")
    hits, _ = _scan(tmp_path, trainer, ENTRY.format(name="LoopRunner"))
    assert "uneven-last-batch" in hits


TRAINING_ARGS = '''
import deepspeed
import torch


class TrainingArguments:
    def _setup_devices(self):
        if self.deepspeed:
            deepspeed.init_distributed()
        else:
            torch.distributed.init_process_group(backend="nccl")
        return torch.device("cuda", self.local_rank)
'''


@pytest.mark.parametrize("imports", [
    "from .trainer_pt_utils import IterableDatasetShard\nfrom .training_args import TrainingArguments",
    "from trainer_pt_utils import IterableDatasetShard\nfrom training_args import TrainingArguments",
], ids=["package_relative", "copied_beside"])
def test_the_frameworks_own_source_in_a_vendored_package_is_the_framework(tmp_path, imports):
    """A repository that vendors the whole library (``src/transformers/trainer.py`` importing its siblings
    relatively, ``training_args.py`` starting DeepSpeed or the process group)."""
    package = tmp_path / "transformers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "training_args.py").write_text(TRAINING_ARGS)
    (package / "trainer_pt_utils.py").write_text("class IterableDatasetShard:\n    pass\n")
    (package / "trainer.py").write_text(VENDORED.format(imports=imports, name="Trainer"))
    for scanned in (package / "trainer.py", package):
        hits, _ = shown_findings([str(scanned)])
        assert "uneven-last-batch" not in hits, (scanned, hits)
