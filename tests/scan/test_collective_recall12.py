"""collective-mismatch, scan-recall12: an exit (``continue`` / ``break`` / ``return``) nested in a rank arm under a
further test skips a collective every rank runs later in the loop body or the function (VLMEvalKit#726: rank 0's
merge block ``continue``s past the loop's barrier in infer-only mode; lightning#20536: rank 0 returns from a helper
before ``fabric.barrier()``; libreyolo#782: rank 0 returns on its own validation result before the barrier)."""

from __future__ import annotations

import textwrap

import pytest

from tests.scan.quality import shown_findings

SETUP = '''\
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def is_main_process():
    return dist.get_rank() == 0


def write_results(results, path):
    torch.save(results, path)

'''

MAIN = '''
if __name__ == "__main__":
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    run(model, ["a", "b"], int(os.environ["RANK"]), "infer")
    dist.destroy_process_group()
'''

MERGE_THEN_CONTINUE = '''
def run(model, datasets, rank, mode):
    for name in datasets:
        write_results(model(torch.randn(4, 8).cuda()), f"{rank}_{name}.pt")
        dist.barrier()
        if rank == 0:
            merged = [torch.load(f"{r}_{name}.pt") for r in range(dist.get_world_size())]
            if mode == "infer":
                continue
            print(name, len(merged))
        dist.barrier()
'''

MAIN_FLAG_BREAK = '''
def run(model, datasets, rank, mode):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(100):
        optimizer.zero_grad()
        model(torch.randn(4, 8).cuda()).sum().backward()
        optimizer.step()
        if is_main_process():
            write_results(model.state_dict(), "last.pt")
            if os.path.exists("STOP"):
                break
        stats = torch.ones(1).cuda()
        dist.all_reduce(stats)
'''

RETURN_ON_OWN_RESULT = '''
def validate(model):
    return model(torch.randn(4, 8).cuda()).mean().item()


def finish_epoch(model, best):
    if dist.get_rank() == 0:
        score = validate(model)
        if score <= best:
            return best
        write_results(model.state_dict(), "best.pt")
    dist.barrier()
    return best


def run(model, datasets, rank, mode):
    best = float("inf")
    for epoch in range(10):
        best = finish_epoch(model, best)
'''

LOCAL_RANK_ARM_TRY_RETURN = '''
def sync_outputs(outputs, local_rank):
    if local_rank in [-1, 0]:
        try:
            write_results(outputs, "outputs.pt")
        except OSError:
            return None
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, outputs)
    return gathered


def run(model, datasets, rank, mode):
    for name in datasets:
        sync_outputs(model(torch.randn(4, 8).cuda()), int(os.environ["LOCAL_RANK"]))
'''

ARM_JOINS_ITSELF = '''
def run(model, datasets, rank, mode):
    for name in datasets:
        if rank == 0:
            write_results(model(torch.randn(4, 8).cuda()), f"{name}.pt")
            if mode == "infer":
                dist.barrier()
                continue
        dist.barrier()
'''

INNER_LOOP_CONTINUE = '''
def run(model, datasets, rank, mode):
    for name in datasets:
        if rank == 0:
            for path in os.listdir("."):
                if not path.endswith(".pt"):
                    continue
                print(path)
        dist.barrier()
'''

SWITCHED_OFF = '''
def run(model, datasets, rank, mode):
    for name in datasets:
        if rank == 0:
            write_results(model(torch.randn(4, 8).cuda()), f"{name}.pt")
            if False and mode == "infer":
                continue
        dist.barrier()
'''

BAIL_OUT = '''
{setup}


def run(model, datasets, rank, mode):
    if int(os.environ.get("RANK", 0)) == 0:
        os.makedirs("logs", exist_ok=True)
        if os.path.exists("logs/out.log"):
            print("Error. Experiment already exists.")
            return -1
    {start}
    flags = torch.zeros(1).cuda()
    dist.broadcast(flags, src=0)
'''
BAIL_OUT_BEFORE_SETUP = BAIL_OUT.format(setup='def start(args):\n    dist.init_process_group("nccl")',
                                        start="start(None)")
BAIL_OUT_BEFORE_IMPORTED_SETUP = BAIL_OUT.format(setup="from utils.distributed import init_distributed_device",
                                                 start="init_distributed_device(mode)")


@pytest.mark.parametrize("body, flagged", [
    (MERGE_THEN_CONTINUE, True),
    (MAIN_FLAG_BREAK, True),
    (RETURN_ON_OWN_RESULT, True),
    (LOCAL_RANK_ARM_TRY_RETURN, True),
    (ARM_JOINS_ITSELF, False),
    (INNER_LOOP_CONTINUE, False),
    (SWITCHED_OFF, False),
    (BAIL_OUT_BEFORE_SETUP, False),
    (BAIL_OUT_BEFORE_IMPORTED_SETUP, False),
], ids=["merge-then-continue", "main-flag-break", "return-on-own-result", "local-rank-arm-try-return",
        "arm-joins-itself", "inner-loop-continue", "switched-off", "bail-out-before-setup",
        "bail-out-before-imported-setup"])
def test_exit_nested_in_rank_arm(tmp_path, body, flagged):
    path = tmp_path / "train.py"
    path.write_text(SETUP + textwrap.dedent(body) + MAIN, encoding="utf-8")
    hits = shown_findings([str(path)])[0].get("collective-mismatch", [])
    assert any("is skipped by the" in hit["detail"] for hit in hits) is flagged
