"""What the code alone cannot prove is advice (info), and one cause is one warning per file (scan-precision):
cpu_count() workers per rank, find_unused_parameters on a model that seems to use every parameter, several Hub
loads on every rank."""

from __future__ import annotations

from pathlib import Path

from tests.scan.quality import shown_findings
from troubleshooter.scan import scan_paths

HEAD = '''
import os
import multiprocessing
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
'''


def _scan(tmp_path: Path, code: str) -> tuple[dict, dict]:
    path = tmp_path / "train.py"
    path.write_text(code, encoding="utf-8")
    return scan_paths([str(path)]).hits, shown_findings([str(path)])[0]


WORKERS = HEAD + '''
data = TensorDataset(torch.randn(64, 8))
loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data), num_workers={workers})
'''


def test_whole_machine_workers_per_rank_are_advice(tmp_path):
    for workers in ("os.cpu_count()", "multiprocessing.cpu_count()", "len(os.sched_getaffinity(0))",
                    "os.cpu_count() - 1"):
        hits, shown = _scan(tmp_path, WORKERS.format(workers=workers))
        assert "cpu-oversubscribed" in hits and "cpu-oversubscribed" not in shown, workers
    hits, _ = _scan(tmp_path, WORKERS.format(workers="os.cpu_count() // torch.cuda.device_count()"))
    assert "cpu-oversubscribed" not in hits


UNUSED = HEAD + '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 1)

    def forward(self, x):
        return self.b(self.a(x))

model = DDP(Net().cuda(), device_ids=[local_rank], find_unused_parameters=True)
'''


def test_find_unused_on_a_model_using_every_submodule_is_advice(tmp_path):
    hits, shown = _scan(tmp_path, UNUSED)
    assert "unnecessary-find-unused-parameters" in hits
    assert "unnecessary-find-unused-parameters" not in shown


HUB = HEAD + '''
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
{loads}
'''


def test_several_hub_loads_on_every_rank_are_one_warning(tmp_path):
    loads = ('config = AutoConfig.from_pretrained("org/model")\n'
             'model = AutoModelForCausalLM.from_pretrained("org/model")\n'
             'tokenizer = AutoTokenizer.from_pretrained("org/model")\n')
    hits, shown = _scan(tmp_path, HUB.format(loads=loads))
    assert len(hits["hf-cache-contention"]) == 1 and "hf-cache-contention" in shown
    first = hits["hf-cache-contention"][0]
    assert "also lines" in first["detail"] and first["line"] == HUB.format(loads=loads).splitlines().index(
        'config = AutoConfig.from_pretrained("org/model")') + 1
    hits, _ = _scan(tmp_path, HUB.format(loads='model = AutoModelForCausalLM.from_pretrained("org/model")\n'))
    assert len(hits["hf-cache-contention"]) == 1 and "also lines" not in hits["hf-cache-contention"][0]["detail"]


def test_a_hub_load_under_a_file_lock_is_serialised(tmp_path):
    loads = ('from filelock import FileLock\n'
             'with FileLock("/tmp/hub.lock"):\n'
             '    model = AutoModelForCausalLM.from_pretrained("org/model")\n')
    hits, _ = _scan(tmp_path, HUB.format(loads=loads))
    assert "hf-cache-contention" not in hits


def test_a_rank_zero_first_context_entered_before_the_load_orders_it(tmp_path):
    loads = ('from composer.utils import dist as cdist\n'
             'def build(name):\n'
             '    with cdist.local_rank_zero_download_and_wait("/tmp/signal"):\n'
             '        pass\n'
             '    return AutoTokenizer.from_pretrained(name)\n'
             'tok = build("org/model")\n')
    hits, _ = _scan(tmp_path, HUB.format(loads=loads))
    assert "hf-cache-contention" not in hits
    hits, _ = _scan(tmp_path, HUB.format(loads=loads.replace("cdist.local_rank_zero_download_and_wait", "open")))
    assert "hf-cache-contention" in hits


def test_a_load_from_a_local_directory_by_its_name_is_not_a_hub_download(tmp_path):
    for name in ("args.output_dir", "tokenizer_save_dir", "local_folder_path", "tmp_path", "checkpoint_dir",
                 "cfg.save_path"):
        loads = f'model = AutoModelForCausalLM.from_pretrained({name})\n'
        hits, _ = _scan(tmp_path, HUB.format(loads=loads))
        assert "hf-cache-contention" not in hits, name
    for name in ("args.model_name_or_path", "model_id", "cfg.model_name"):
        hits, _ = _scan(tmp_path, HUB.format(loads=f'model = AutoModelForCausalLM.from_pretrained({name})\n'))
        assert "hf-cache-contention" in hits, name
