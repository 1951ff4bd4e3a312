"""A module that runs through a framework keeps the framework's knowledge when another module of the same scan
wraps DDP by hand (issue 11, scan-precision4): a vendored copy of a framework's trainer, or the framework's own
sources when its repository is scanned (accelerate's and diffusers' examples next to the library). The module that
wraps DDP itself is still judged as raw DDP."""

from __future__ import annotations

from pathlib import Path

from tests.scan.quality import shown_findings

RAW_HELPER = '''
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return DDP(model.cuda(), device_ids=[local_rank])
'''

ACCELERATE_ENTRY = '''
import torch
from accelerate import Accelerator
from transformers import AutoModelForSequenceClassification, AutoTokenizer
{extra_import}


def main():
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained("bert-base-cased")
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-cased")
    {extra}
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    loader = torch.utils.data.DataLoader(torch.randint(0, 100, (64, 16)), batch_size=8, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        loss = model(batch).logits.mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
'''


def _scan(tmp_path: Path, entry: str) -> dict:
    (tmp_path / "vendored.py").write_text(RAW_HELPER, encoding="utf-8")
    (tmp_path / "train.py").write_text(entry, encoding="utf-8")
    hits, facts = shown_findings([str(tmp_path)])
    assert facts["scan.uses_distributed"] is True
    return hits


def test_a_framework_module_beside_a_raw_ddp_module_keeps_the_frameworks_knowledge(tmp_path):
    hits = _scan(tmp_path, ACCELERATE_ENTRY.format(extra_import="", extra="pass"))
    assert "hf-cache-contention" not in hits and "missing-distributed-sampler" not in hits, hits


def test_a_module_that_wraps_ddp_itself_is_still_raw(tmp_path):
    entry = ACCELERATE_ENTRY.format(extra_import="from vendored import wrap", extra="model = wrap(model)").replace(
        "from accelerate import Accelerator\n", "from accelerate import Accelerator\nfrom torch.nn.parallel import "
        "DistributedDataParallel as DDP\nimport torch.distributed as dist\n").replace(
        "    model = wrap(model)", "    dist.init_process_group('nccl')\n    model = DDP(model.cuda())")
    hits = _scan(tmp_path, entry)
    assert "hf-cache-contention" in hits, hits
