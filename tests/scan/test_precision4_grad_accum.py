"""grad-accum-without-no-sync (issue 11, scan-precision4): more spellings of "skip the all-reduce on the non-final
micro-steps" that real correct code uses, and the near miss that still warns.

* ``sync_ctx = model.no_sync if not last else contextlib.nullcontext``; ``with sync_ctx():`` (the method chosen by
  reference, called by the ``with``);
* ``model.require_backward_grad_sync = (step + 1) % accum == 0`` (nanoGPT's switch, here under a gated step);
* ``ctx = model.no_sync() if ... else nullcontext()``, an ``ExitStack`` entering ``no_sync()``, a local context
  manager wrapping it (already known: pinned here so they stay known)."""

from __future__ import annotations

from pathlib import Path

from tests.scan.quality import shown_findings

SCRIPT = '''
import contextlib
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


{helper}
def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    accum = 4
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
{micro_step}
            if (step + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

FORWARD_BACKWARD = ("loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda()) / accum", "loss.backward()")


def _block(head: str | None, indent: str = "            ") -> str:
    inner = indent + ("    " if head else "")
    lines = ([indent + head] if head else []) + [inner + line for line in FORWARD_BACKWARD]
    return "\n".join(lines)


SKIPPING = {
    "method by reference": "            sync_ctx = model.no_sync if (step + 1) % accum != 0 else contextlib.nullcontext\n"
                           + _block("with sync_ctx():"),
    "nanoGPT switch": "            model.require_backward_grad_sync = (step + 1) % accum == 0\n" + _block(None),
    "context chosen by call": "            ctx = model.no_sync() if (step + 1) % accum != 0 else contextlib.nullcontext()\n"
                              + _block("with ctx:"),
    "local context manager": _block("with maybe_no_sync(model, (step + 1) % accum != 0):"),
}


HELPER = '''
@contextlib.contextmanager
def maybe_no_sync(model, skip):
    if skip:
        with model.no_sync():
            yield
    else:
        yield

'''


def _hits(tmp_path: Path, micro_step: str) -> list:
    path = tmp_path / "train.py"
    helper = HELPER if "maybe_no_sync" in micro_step else ""
    path.write_text(SCRIPT.format(micro_step=micro_step, helper=helper), encoding="utf-8")
    hits, facts = shown_findings([str(path)])
    assert facts["scan.uses_distributed"] is True
    return hits.get("grad-accum-without-no-sync", [])


def test_micro_steps_that_skip_the_all_reduce_are_not_flagged(tmp_path):
    for name, micro_step in SKIPPING.items():
        assert _hits(tmp_path, micro_step) == [], name


def test_accumulation_that_all_reduces_every_micro_step_still_warns(tmp_path):
    assert len(_hits(tmp_path, _block(None))) == 1
    # the switch read but never set: nothing turns the all-reduce off
    plain = SCRIPT.format(micro_step=_block(None), helper="").replace(
        "    accum = 4\n", "    accum = 4\n    print(getattr(model, 'find_unused_parameters', None))\n")
    path = tmp_path / "train.py"
    path.write_text(plain, encoding="utf-8")
    assert shown_findings([str(path)])[0].get("grad-accum-without-no-sync")


def test_a_no_sync_chosen_on_the_wrong_micro_steps_still_warns(tmp_path):
    """modelscope/FunASR#3472: ``no_sync if i % k != 0`` against a step at ``(i + 1) % k == 0`` syncs the wrong
    micro-step (and leaves the stepping one inside no_sync)."""
    wrong = ("            sync_ctx = model.no_sync if step % accum != 0 else contextlib.nullcontext\n"
             + _block("with sync_ctx():"))
    assert len(_hits(tmp_path, wrong)) == 1
    # the same choice written with the branches swapped is judged the same way
    swapped = ("            sync_ctx = contextlib.nullcontext if (step + 1) % accum == 0 else model.no_sync\n"
               + _block("with sync_ctx():"))
    assert _hits(tmp_path, swapped) == []
