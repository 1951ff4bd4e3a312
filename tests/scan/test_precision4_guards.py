"""logging-from-all-ranks on real rank-0 guards (issue 11, scan-precision4): a checkpoint save or a tracker under
any of these spellings runs on one rank; the unguarded save still warns. New here: torch_xla's
``xm.is_master_ordinal()`` (the ``_ordinal`` suffix of the main-process family); the rest pin spellings real
correct files use (an ``or`` with "not distributed", ``in (0, -1)``, the rank read from the environment as text,
a derived flag, a helper predicate, a writer or run made only on rank 0 through a conditional expression)."""

from __future__ import annotations

from pathlib import Path

from tests.scan.quality import shown_findings

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter
{imports}


def is_rank_zero():
    return not dist.is_initialized() or dist.get_rank() == 0


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    rank = int(os.environ["RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    {setup}
    data = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        {save}
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''
SAVE = "torch.save(model.module.state_dict(), 'ckpt.pt')"
GUARDED = [
    ("import torch_xla.core.xla_model as xm", "pass", f"if xm.is_master_ordinal():\n            {SAVE}"),
    ("", "pass", f"if not dist.is_initialized() or dist.get_rank() == 0:\n            {SAVE}"),
    ("", "pass", f"if torch.distributed.get_rank() in (0, -1):\n            {SAVE}"),
    ("", "pass", f"if os.environ.get('RANK', '0') == '0':\n            {SAVE}"),
    ("", "master_process = rank == 0", f"if master_process:\n            {SAVE}"),
    ("", "world_size = dist.get_world_size()", f"if world_size == 1 or rank == 0:\n            {SAVE}"),
    ("", "pass", f"if is_rank_zero():\n            {SAVE}"),
    ("import horovod.torch as hvd", "pass", f"if hvd.rank() == 0:\n            {SAVE}"),
    ("", "writer = SummaryWriter('runs') if rank == 0 else None",
     "if writer is not None:\n            writer.add_scalar('loss', loss.item(), epoch)"),
    ("", "run = wandb.init(project='p') if dist.get_rank() == 0 else None",
     "if run is not None:\n            run.log({'loss': loss.item()})"),
]


def _hits(tmp_path: Path, imports: str, setup: str, save: str) -> list:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(imports=imports, setup=setup, save=save), encoding="utf-8")
    hits, facts = shown_findings([str(path)])
    assert facts["scan.uses_distributed"] is True
    return hits.get("logging-from-all-ranks", [])


def test_writes_under_a_rank0_guard_are_not_flagged(tmp_path):
    for imports, setup, save in GUARDED:
        assert _hits(tmp_path, imports, setup, save) == [], save


def test_the_same_writes_unguarded_still_warn(tmp_path):
    assert _hits(tmp_path, "", "pass", SAVE)
    assert _hits(tmp_path, "import torch_xla.core.xla_model as xm", "pass",
                 f"if xm.get_ordinal() >= 0:\n            {SAVE}")  # every ordinal passes this test
    assert _hits(tmp_path, "", "writer = SummaryWriter('runs')",
                 "writer.add_scalar('loss', loss.item(), epoch)")


def test_hf_training_arguments_switches_and_one_process_arms_guard_writes(tmp_path):
    """A vendored Hugging Face Trainer (ChatGLM's ptuning/trainer.py): ``if self.args.should_save:``,
    ``if self.is_world_process_zero():``, and ``if self.args.world_size <= 1:`` (one process: one file)."""
    class_code = '''
class Saver:
    def __init__(self, args, model):
        self.args, self.model = args, model

    def is_world_process_zero(self):
        return self.args.process_index == 0

    def save(self, output_dir):
        {guard}
            torch.save(self.model.state_dict(), os.path.join(output_dir, "model.bin"))
'''
    for guard in ("if self.args.should_save:", "if self.is_world_process_zero():", "if self.args.world_size <= 1:",
                  "if training_args.should_log:", "if not dist.is_initialized():"):
        code = SCRIPT.format(imports="", setup="saver = Saver(training_args, model)", save="saver.save('out')")
        code = code.replace("\n\ndef main():", class_code.format(guard=guard) + "\n\ndef main():").replace(
            "    rank = int(os.environ[\"RANK\"])\n", "    rank = int(os.environ[\"RANK\"])\n    training_args = parse()\n")
        code = code.replace("    saver = Saver(training_args, model)\n", "").replace(
            "    optimizer = torch.optim", "    saver = Saver(training_args, model)\n    optimizer = torch.optim")
        if "training_args.should_log" in guard:
            code = code.replace("self.args.process_index == 0", "True")
        path = tmp_path / "train.py"
        path.write_text(code.replace("import os\n", "import os\nfrom helpers import parse\n", 1), encoding="utf-8")
        assert shown_findings([str(path)])[0].get("logging-from-all-ranks") is None, guard
    for guard in ("if self.should_save:", "if self.args.world_size > 1:", "if should_save:"):  # not rank-0 switches
        code = SCRIPT.format(imports="", setup="pass", save="Saver(None, model).save('out')")
        code = code.replace("\n\ndef main():", class_code.format(guard=guard).replace(
            "    def save(self", "    should_save = True\n\n    def save(self") + "\n\ndef main():")
        code = code.replace("if should_save:", "if self.should_save and should_save:").replace(
            "    def save(self, output_dir):", "    def save(self, output_dir, should_save=True):")
        path = tmp_path / "train.py"
        path.write_text(code, encoding="utf-8")
        assert shown_findings([str(path)])[0].get("logging-from-all-ranks"), guard
