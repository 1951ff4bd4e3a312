"""Data-pipeline spellings (scan-data): a ``datasets`` map on every rank under the HF Trainer or Accelerate,
each case with the near misses that must stay silent."""

from __future__ import annotations

import pytest

from troubleshooter.scan import scan_paths

from .conftest import scan_ids


TRAINER = '''
from datasets import Dataset, load_dataset
from transformers import AutoTokenizer, Trainer, TrainingArguments

args = TrainingArguments("out", per_device_train_batch_size=8)
tokenizer = AutoTokenizer.from_pretrained("gpt2")
{prep}
Trainer(model=None, args=args, train_dataset=data, tokenizer=tokenizer).train()
'''

SUBCLASS = '''
from datasets import load_dataset
from transformers import Trainer, TrainingArguments


class MyTrainer(Trainer):
    def __init__(self, model, args, dataset, tokenizer):
        super().__init__(model=model, args=args, train_dataset=self._prepare(dataset, tokenizer))

{decorator}    def _prepare(self, dataset, tokenizer):
        return dataset.map(lambda ex: tokenizer(ex["text"]), batched=True, remove_columns=dataset.column_names)


def main(model, tokenizer):
    MyTrainer(model, TrainingArguments("out"), load_dataset("imdb", split="train"), tokenizer).train()
'''

ACCELERATE = '''
from accelerate import Accelerator
from datasets import load_dataset

accelerator = Accelerator()
raw = load_dataset("wikitext", "wikitext-2-raw-v1")
{prep}
'''


@pytest.mark.parametrize("prep", [
    'data = load_dataset("imdb", split="train").map(lambda b: tokenizer(b["text"]), batched=True)',
    'raw = load_dataset("imdb", split="train")\ndata = raw.filter(lambda ex: len(ex["text"]) > 0)',
    'raw = load_dataset("json", data_files="d.json")["train"]\ndata = raw.map(lambda b: b, num_proc=4)',
])
def test_a_dataset_map_before_the_trainer_runs_on_every_rank(tmp_path, prep):
    assert "hf-cache-contention" in scan_ids(tmp_path, TRAINER.format(prep=prep))


@pytest.mark.parametrize("prep", [
    'with args.main_process_first(desc="tokenize"):\n    data = load_dataset("imdb").map(lambda b: b, batched=True)',
    'data = load_dataset("imdb").map(lambda b: b, batched=True, keep_in_memory=True)',
    'raw = load_dataset("imdb", streaming=True)\ndata = raw.map(lambda b: b, batched=True)',
    'raw = Dataset.from_dict({"text": ["a", "b"]})\ndata = raw.map(lambda b: b, batched=True)',
    'data = list(map(str.lower, ["A", "B"]))',
])
def test_a_guarded_in_memory_or_streaming_map_is_quiet(tmp_path, prep):
    assert "hf-cache-contention" not in scan_ids(tmp_path, TRAINER.format(prep=prep))


def test_a_map_in_a_trainer_subclass_method_counts_unless_decorated_main_process_first(tmp_path):
    assert "hf-cache-contention" in scan_ids(tmp_path, SUBCLASS.format(decorator=""))
    quiet = SUBCLASS.format(decorator="    @PartialState().local_main_process_first()\n")
    assert "hf-cache-contention" not in scan_ids(tmp_path, "from accelerate import PartialState\n" + quiet)


def test_accelerate_handles_its_loading_but_not_the_users_map(tmp_path):
    assert "hf-cache-contention" in scan_ids(tmp_path, ACCELERATE.format(prep='tok = raw.map(lambda b: b, batched=True)'))
    guarded = 'with accelerator.main_process_first():\n    tok = raw.map(lambda b: b, batched=True)'
    assert "hf-cache-contention" not in scan_ids(tmp_path, ACCELERATE.format(prep=guarded))
    assert "hf-cache-contention" not in scan_ids(tmp_path, ACCELERATE.format(prep='pool_result = pool.map(len, [1])'))


# A DDP entry point up to its dataset; each case below adds what follows.
DDP_MAIN = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = nn.parallel.DistributedDataParallel(nn.Linear(4, 4).cuda(rank), device_ids=[rank])
    data = TensorDataset(torch.randn(100, 4))
'''

LOADER_KWARGS = DDP_MAIN + '''{kwargs}
    loader = DataLoader(data, **loader_kwargs)
    for epoch in range(3):
{set_epoch}
        for (x,) in loader:
            model(x.cuda(rank)).sum().backward()
'''


@pytest.mark.parametrize("kwargs", [
    "    loader_kwargs = dict(batch_size=8, shuffle=True, num_workers=2)",
    '    loader_kwargs = {"batch_size": 8, "pin_memory": True}',
])
def test_loader_options_spread_from_a_local_dict_are_read(tmp_path, kwargs):
    code = LOADER_KWARGS.format(kwargs=kwargs, set_epoch="        pass")
    assert "missing-distributed-sampler" in scan_ids(tmp_path, code)


@pytest.mark.parametrize("kwargs", [
    "    sampler = DistributedSampler(data)\n    loader_kwargs = dict(batch_size=8, sampler=sampler)",
    "    loader_kwargs = dict(batch_size=8)\n    loader_kwargs['sampler'] = DistributedSampler(data)",
    "    loader_kwargs = build_options(data)",
])
def test_spread_options_with_a_sampler_or_of_unknown_content_are_quiet(tmp_path, kwargs):
    code = LOADER_KWARGS.format(kwargs=kwargs, set_epoch="        loader.sampler.set_epoch(epoch)")
    assert "missing-distributed-sampler" not in scan_ids(tmp_path, code)


STEPS = "\nimport itertools" + DDP_MAIN + '''    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
{body}
'''

RESTART = '''    it = iter(loader)
    passes = 0
    for step in range(10000):
        try:
            (x,) = next(it)
        except StopIteration:
            passes += 1
{fix}            it = iter(loader)
            (x,) = next(it)
        model(x.cuda(rank)).sum().backward()'''


def test_iteration_based_training_restarting_the_loader_needs_set_epoch(tmp_path):
    assert "missing-set-epoch" in scan_ids(tmp_path, STEPS.format(body=RESTART.format(fix="")))
    fixed = RESTART.format(fix="            sampler.set_epoch(passes)\n")
    assert "missing-set-epoch" not in scan_ids(tmp_path, STEPS.format(body=fixed))


def test_cycling_a_loader_replays_one_order(tmp_path):
    body = "    for (x,) in itertools.cycle(loader):\n        model(x.cuda(rank)).sum().backward()"
    assert "missing-set-epoch" in scan_ids(tmp_path, STEPS.format(body=body))
    once = "    it = iter(loader)\n    (x,) = next(it)\n    model(x.cuda(rank)).sum().backward()"
    assert "missing-set-epoch" not in scan_ids(tmp_path, STEPS.format(body=once))


WORKERS = '''
import argparse
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=os.cpu_count())


def main():
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = nn.parallel.DistributedDataParallel(nn.Linear(4, 4).cuda(rank), device_ids=[rank])
    data = TensorDataset(torch.randn(100, 4))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler, num_workers={workers})
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            model(x.cuda(rank)).sum().backward()
'''


@pytest.mark.parametrize("workers", ["len(os.sched_getaffinity(0))", "args.workers", "os.cpu_count() - 1"])
def test_every_rank_taking_all_the_cores_in_any_spelling(tmp_path, workers):
    assert "cpu-oversubscribed" in scan_ids(tmp_path, WORKERS.format(workers=workers))


@pytest.mark.parametrize("workers", ['os.cpu_count() // int(os.environ["LOCAL_WORLD_SIZE"])', "min(8, os.cpu_count())", "4"])
def test_a_share_of_the_cores_is_quiet(tmp_path, workers):
    assert "cpu-oversubscribed" not in scan_ids(tmp_path, WORKERS.format(workers=workers))


SHARDED_INLINE = '''
import os
import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Subset, TensorDataset


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    world = dist.get_world_size()
    model = nn.parallel.DistributedDataParallel(nn.Linear(4, 4).cuda(rank), device_ids=[rank])
    full = TensorDataset(torch.randn(101, 4))
    parts = np.array_split(np.arange(len(full)), world)
    loader = DataLoader({dataset}, batch_size=8)
    for epoch in range(3):
        for (x,) in loader:
            model(x.cuda(rank)).sum().backward()
'''


def test_a_dataset_split_by_rank_inside_the_loader_call_is_uneven_not_unsharded(tmp_path):
    ids = scan_ids(tmp_path, SHARDED_INLINE.format(dataset="Subset(full, parts[rank])"))
    assert "uneven-last-batch" in ids and "missing-distributed-sampler" not in ids
    ids = scan_ids(tmp_path, SHARDED_INLINE.format(dataset="Subset(full, parts[0])"))
    assert "uneven-last-batch" not in ids and "missing-distributed-sampler" in ids


GPU_BATCH = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(args):
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = nn.parallel.DistributedDataParallel(nn.Linear(4, 4).cuda(rank), device_ids=[rank])
    data = TensorDataset(torch.randn(100, 4))
    n_gpu = torch.cuda.device_count()
    sampler = DistributedSampler(data)
{loader}
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            model(x.cuda(rank)).sum().backward()
'''


@pytest.mark.parametrize("loader", [
    "    loader = DataLoader(data, sampler=sampler, batch_size=args.per_gpu_batch_size * n_gpu)",
    "    loader = DataLoader(data, sampler=sampler, batch_size=8 * dist.get_world_size())",
])
def test_a_batch_multiplied_by_the_gpu_count_is_dataparallels_global_batch(tmp_path, loader):
    assert "batch-size-mismatch" in scan_ids(tmp_path, GPU_BATCH.format(loader=loader))


@pytest.mark.parametrize("loader", [
    "    loader = DataLoader(data, sampler=sampler, batch_size=args.per_gpu_batch_size)",
    "    if args.distributed:\n        loader = DataLoader(data, sampler=sampler, batch_size=8)\n"
    "    else:\n        loader = DataLoader(data, batch_size=8 * n_gpu)",
])
def test_a_per_gpu_batch_or_a_dataparallel_branch_is_quiet(tmp_path, loader):
    assert "batch-size-mismatch" not in scan_ids(tmp_path, GPU_BATCH.format(loader=loader))


SPLIT_LOADER = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def make_loader(data, split, distributed):
{sampler}
    return DataLoader(data, batch_size=8, sampler=sampler, shuffle={shuffle})


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = nn.parallel.DistributedDataParallel(nn.Linear(4, 4).cuda(rank), device_ids=[rank])
    loader = make_loader(TensorDataset(torch.randn(100, 4)), "train", True)
    for epoch in range(3):
        loader.sampler.set_epoch(epoch)
        for (x,) in loader:
            model(x.cuda(rank)).sum().backward()
'''

ALWAYS = '    sampler = DistributedSampler(data, shuffle=(split == "train"))'
SOMETIMES = '    sampler = DistributedSampler(data) if distributed else None'


def test_a_shuffle_expression_next_to_an_unconditional_distributed_sampler_raises_when_true(tmp_path):
    assert "shuffle-with-sampler" in scan_ids(tmp_path, SPLIT_LOADER.format(sampler=ALWAYS, shuffle='(split == "train")'))


@pytest.mark.parametrize("sampler, shuffle", [
    (SOMETIMES, "(sampler is None)"),
    (SOMETIMES, '(split == "train")'),
    (ALWAYS, "(sampler is None)"),
    (ALWAYS, 'split == "train" and not distributed'),
    (ALWAYS, "False"),
])
def test_shuffle_tied_to_the_sampler_or_a_conditional_sampler_is_quiet(tmp_path, sampler, shuffle):
    assert "shuffle-with-sampler" not in scan_ids(tmp_path, SPLIT_LOADER.format(sampler=sampler, shuffle=shuffle))


def test_a_dataset_map_in_a_helper_module_of_a_trainer_project_is_scanned(tmp_path):
    (tmp_path / "train.py").write_text(
        "from transformers import TrainingArguments\nfrom mytrainer import MyTrainer\n\n"
        "def main(model, data, tok):\n    MyTrainer(model, TrainingArguments('out'), data, tok).train()\n", encoding="utf-8")
    (tmp_path / "mytrainer.py").write_text(
        "from transformers import Trainer\n\n\nclass MyTrainer(Trainer):\n"
        "    def __init__(self, model, args, dataset, tok):\n"
        "        dataset = dataset.map(lambda ex: tok(ex['text']), batched=True)\n"
        "        super().__init__(model=model, args=args, train_dataset=dataset)\n", encoding="utf-8")
    hits = scan_paths([str(tmp_path)]).hits
    assert [h["path"].endswith("mytrainer.py") for h in hits.get("hf-cache-contention", [])] == [True]
