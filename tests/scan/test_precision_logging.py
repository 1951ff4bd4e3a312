"""logging-from-all-ranks precision (scan-precision): writes to per-rank files, rank names of the distributed
family, reports of a rank's own event, and what counts as a warning (trackers, shared files) vs info (lines)."""

from __future__ import annotations

from pathlib import Path

from tests.scan.quality import shown_findings
from troubleshooter.scan import scan_paths

ID = "logging-from-all-ranks"

HEAD = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
'''


def _write(tmp_path: Path, code: str) -> str:
    path = tmp_path / "train.py"
    path.write_text(code, encoding="utf-8")
    return str(path)


def _hits(tmp_path: Path, code: str) -> list[dict]:
    return scan_paths([_write(tmp_path, code)]).hits.get(ID, [])


def _warned(tmp_path: Path, code: str) -> bool:
    return ID in shown_findings([_write(tmp_path, code)])[0]


SHARD = HEAD + '''
def dump(obj, folder):
{derive}
    torch.save(obj, path)

dump({{"w": 1}}, "/tmp/out")
'''


def test_a_file_named_after_the_rank_through_locals_is_each_ranks_own(tmp_path):
    for derive in ('    me = dist.get_rank()\n    name = f"part_{me}.pt"\n    path = os.path.join(folder, name)',
                   '    r = dist.get_rank()\n    stem = "part_" + str(r)\n    path = folder + "/" + stem + ".pt"',
                   '    idx = int(os.environ["RANK"])\n    fname = "shard{}.pt".format(idx)\n    path = os.path.join(folder, fname)'):
        assert not _hits(tmp_path, SHARD.format(derive=derive)), derive
    shared = '    name = "part.pt"\n    path = os.path.join(folder, name)'
    assert _warned(tmp_path, SHARD.format(derive=shared))


GUARDED = HEAD + '''
class Holder:
    def __init__(self, ranks):
        self.local_rank, self.{name} = ranks  # unpacked from a value the scan cannot read: only the name tells

    def save(self):
        if self.{name} != 0:
            return
        torch.save(model.module.state_dict(), "last.pt")

Holder((int(os.environ["LOCAL_RANK"]), int(os.environ["RANK"]))).save()
'''


def test_rank_names_of_the_distributed_and_data_parallel_family_guard(tmp_path):
    for name in ("distributed_rank", "data_parallel_rank", "dp_rank", "global_rank"):
        assert not _hits(tmp_path, GUARDED.format(name=name)), name
    assert _warned(tmp_path, GUARDED.format(name="epoch_count"))


LOOP = HEAD + '''
for step in range(100):
    loss = model(torch.randn(4, 8).cuda()).sum()
{body}
    opt.zero_grad()
    loss.backward()
    opt.step()
'''


def test_a_report_of_a_skipped_or_aborted_step_is_not_a_progress_line(tmp_path):
    for leave in ("continue", "break", "raise RuntimeError('bad loss')", "return"):
        body = f"    if torch.isnan(loss):\n        print('non-finite loss, step', step)\n        {leave}"
        code = LOOP.format(body=body).replace("for step", "def run():\n  for step").replace("\n    ", "\n      ")
        code = code + "\nrun()\n"
        assert not _hits(tmp_path, code), leave
    per_step = "    if step % 10 == 0:\n        print('step', step, loss.item())"
    assert _hits(tmp_path, LOOP.format(body=per_step))


def test_repeated_console_lines_are_info_trackers_and_shared_files_are_warnings(tmp_path):
    for line in ("    print('loss', loss.item())", "    log.info('loss %s', loss.item())"):
        code = "import logging\nlog = logging.getLogger(__name__)\n" + LOOP.format(body=line)
        assert _hits(tmp_path, code) and not _warned(tmp_path, code), line
    for line in ("import wandb\nwandb.init(project='p')", "torch.save(model.module.state_dict(), 'ckpt.pt')"):
        assert _warned(tmp_path, HEAD + line + "\n"), line


LOCKED = HEAD + '''
{imports}

def cache(features, path):
    with {lock}(path + ".lock"):
        if not os.path.exists(path):
            torch.save(features, path)

cache([1, 2], "/tmp/features.pt")
'''


def test_a_write_under_a_file_lock_is_one_writer_at_a_time(tmp_path):
    for imports, lock in (("from filelock import FileLock", "FileLock"), ("import filelock", "filelock.FileLock"),
                          ("from filelock import SoftFileLock", "SoftFileLock")):
        assert not _hits(tmp_path, LOCKED.format(imports=imports, lock=lock)), lock
    unlocked = LOCKED.format(imports="import contextlib", lock="contextlib.nullcontext")
    assert _warned(tmp_path, unlocked)


RUN = HEAD + '''
import wandb
{start}
for step in range(10):
    loss = model(torch.randn(4, 8).cuda()).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
{log}
'''


def _lines(tmp_path: Path, code: str) -> set[int]:
    return {h["line"] for h in _hits(tmp_path, code)}


def test_run_bound_tracker_calls_follow_where_the_run_started(tmp_path):
    log = "    wandb.log({'loss': loss.item()})"
    for start in ("if dist.get_rank() == 0:\n    wandb.init(project='p')",
                  "wandb.init(project='p') if dist.get_rank() == 0 else None"):
        assert not _hits(tmp_path, RUN.format(start=start, log=log)), start
    for guarded in ("    if wandb.run is not None:\n        wandb.log({'loss': loss.item()})",
                    "    if wandb.run:\n        wandb.log({'loss': loss.item()})"):
        assert not _hits(tmp_path, RUN.format(start="", log=guarded)), guarded
    # started on every rank: one warning, at the start
    code = RUN.format(start="wandb.init(project='p')", log=log)
    assert _lines(tmp_path, code) == {code.splitlines().index("wandb.init(project='p')") + 1}
    assert _warned(tmp_path, code)
    # no start in this module and no run test: the log itself is what we see
    assert _warned(tmp_path, RUN.format(start="", log=log))


def test_a_rank_read_from_the_environment_as_text_guards(tmp_path):
    for guard in ('if os.environ["LOCAL_RANK"] == "0":', 'if os.environ.get("RANK", "0") == "0":',
                  'if os.getenv("RANK") == "0":'):
        code = HEAD + f'{guard}\n    torch.save(model.module.state_dict(), "last.pt")\n'
        assert not _hits(tmp_path, code), guard
    code = HEAD + 'if os.environ["LOCAL_RANK"] != "0":\n    torch.save(model.module.state_dict(), "last.pt")\n'
    assert _hits(tmp_path, code)


GATHERED = HEAD + '''
def evaluate(predictions, distributed):
{branch}
    torch.save(predictions, "predictions.pth")

evaluate([1, 2], dist.is_initialized())
'''


def test_a_rank_zero_return_inside_the_distributed_branch_guards_what_follows(tmp_path):
    for branch in ("    if distributed:\n        dist.barrier()\n        if dist.get_rank() != 0:\n            return",
                   "    if dist.get_world_size() > 1:\n        if not dist.get_rank() == 0:\n            return {}\n"
                   "    else:\n        predictions = list(predictions)",
                   "    if not distributed:\n        predictions = list(predictions)\n    else:\n"
                   "        if dist.get_rank() > 0:\n            return"):
        assert not _hits(tmp_path, GATHERED.format(branch=branch)), branch
    assert _hits(tmp_path, GATHERED.format(branch="    if distributed:\n        dist.barrier()"))


WRITER = HEAD + '''
from torch.utils.tensorboard import SummaryWriter
{make}
for step in range(10):
    opt.step()
{write}
'''


def test_an_event_file_writer_written_on_rank0_only_is_not_a_second_run(tmp_path):
    make = 'writer = SummaryWriter("runs/exp")'
    for write in ('    if dist.get_rank() == 0:\n        writer.add_scalar("loss", 1.0, step)',
                  '    if dist.get_rank() == 0:\n        writer.add_scalar("loss", 1.0, step)\n'
                  '        writer.add_histogram("w", torch.zeros(3), step)'):
        assert not _hits(tmp_path, WRITER.format(make=make, write=write)), write
    assert _warned(tmp_path, WRITER.format(make=make, write='    writer.add_scalar("loss", 1.0, step)'))
    # never written here, or handed to code the scan cannot see: each rank has its own event file, no evidence of
    # a clash (scan-precision6; tests/scan/test_precision6_event_writers.py)
    for write in ('    pass',
                  '    if dist.get_rank() == 0:\n        writer.add_scalar("loss", 1.0, step)\n    log_to(writer)'):
        assert not _hits(tmp_path, WRITER.format(make=make, write=write)), write
    import_wandb = 'import wandb\nrun = wandb.init(project="p")'
    assert _warned(tmp_path, WRITER.format(make=import_wandb,
                                           write='    if dist.get_rank() == 0:\n        run.log({"loss": 1.0})'))


def test_a_tracker_switched_off_by_rank_through_the_environment_runs_on_rank0(tmp_path):
    for switch in ('os.environ["WANDB_MODE"] = "disabled" if dist.get_rank() != 0 else "online"',
                   'if dist.get_rank() != 0:\n    os.environ["WANDB_MODE"] = "disabled"',
                   'if not dist.get_rank() == 0:\n    os.environ["WANDB_DISABLED"] = "true"'):
        code = HEAD + f'import wandb\n{switch}\nwandb.init(project="p")\n'
        assert not _hits(tmp_path, code), switch
    for switch in ('os.environ["WANDB_MODE"] = "offline"', 'os.environ["OTHER"] = str(dist.get_rank())'):
        assert _warned(tmp_path, HEAD + f'import wandb\n{switch}\nwandb.init(project="p")\n'), switch
