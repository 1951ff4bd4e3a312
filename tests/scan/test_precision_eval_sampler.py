"""missing-set-epoch: a DistributedSampler read only by evaluation passes (no optimizer step, no backward) needs
no set_epoch — the order of an evaluation does not matter (the HF example scripts' ``evaluate()``). The same
sampler feeding the loop that trains still warns."""

from __future__ import annotations

from .conftest import scan_ids

SCRIPT = '''
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler


def evaluate(model, dataset, local_rank):
    eval_sampler = DistributedSampler(dataset) if local_rank != -1 else None
    eval_loader = DataLoader(dataset, batch_size=8, sampler=eval_sampler)
    total = 0.0
    for batch in eval_loader:
        with torch.no_grad():
            total += model(batch).sum().item()
    return total


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    model = DDP(torch.nn.Linear(4, 1).cuda(local_rank), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.randn(64, 4)
    train_sampler = {train_sampler}
    train_loader = DataLoader(data, batch_size=8, sampler=train_sampler)
    for epoch in range(3):
{set_epoch}        for batch in train_loader:
            {step}
        evaluate(model, data, local_rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

BACKWARD = "loss = model(batch.cuda(local_rank)).sum()\n            loss.backward()\n            opt.step()"


def _sampler_lines(tmp_path, code: str) -> list[str]:
    from troubleshooter.scan import scan_paths

    path = tmp_path / "train.py"
    path.write_text(code, encoding="utf-8")
    lines = code.splitlines()
    return [lines[h["line"] - 1].strip() for h in scan_paths([str(path)]).hits.get("missing-set-epoch", [])]


def test_only_the_training_sampler_warns_when_no_sampler_gets_set_epoch(tmp_path):
    code = SCRIPT.format(train_sampler="DistributedSampler(data)", set_epoch="", step=BACKWARD)
    assert _sampler_lines(tmp_path, code) == ["train_sampler = DistributedSampler(data)"]


def test_a_loader_read_by_the_loop_that_steps_is_not_an_evaluation(tmp_path):
    code = SCRIPT.format(train_sampler="DistributedSampler(data, shuffle=True)", set_epoch="",
                         step="model(batch).sum().backward()")
    assert _sampler_lines(tmp_path, code) == ["train_sampler = DistributedSampler(data, shuffle=True)"]


def test_with_set_epoch_on_the_training_sampler_nothing_warns(tmp_path):
    code = SCRIPT.format(train_sampler="DistributedSampler(data)", set_epoch="        train_sampler.set_epoch(epoch)\n",
                         step=BACKWARD)
    assert "missing-set-epoch" not in scan_ids(tmp_path, code)


def test_a_loop_that_neither_steps_nor_drops_autograd_is_not_taken_for_an_evaluation(tmp_path):
    code = SCRIPT.format(train_sampler="DistributedSampler(data)", set_epoch="", step=BACKWARD)
    code = code.replace("        with torch.no_grad():\n            total += model(batch).sum().item()",
                        "        total += float(len(batch))")
    assert sorted(_sampler_lines(tmp_path, code)) == [
        "eval_sampler = DistributedSampler(dataset) if local_rank != -1 else None",
        "train_sampler = DistributedSampler(data)"]


def test_an_evaluation_function_decorated_without_autograd(tmp_path):
    code = SCRIPT.format(train_sampler="DistributedSampler(data)", set_epoch="", step=BACKWARD)
    code = code.replace("        with torch.no_grad():\n            total += model(batch).sum().item()",
                        "        total += model(batch).sum().item()")
    code = code.replace("def evaluate(", "@torch.no_grad()\ndef evaluate(")
    assert _sampler_lines(tmp_path, code) == ["train_sampler = DistributedSampler(data)"]
