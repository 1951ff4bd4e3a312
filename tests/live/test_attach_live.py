"""`troubleshoot attach` on real hung gloo jobs (torchrun, real ranks, real py-spy)."""

from __future__ import annotations

import json
import time

import pytest

from .conftest import torchrun, troubleshoot

pytestmark = pytest.mark.slow


def _attach(pid: int) -> tuple[dict, float, int]:
    start = time.monotonic()
    proc = troubleshoot("attach", str(pid), "--format", "json", timeout=60)
    elapsed = time.monotonic() - start
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return json.loads(proc.stdout), elapsed, proc.returncode


def test_attach_names_the_rank_that_skipped_an_all_reduce(jobs):
    job = jobs.start(torchrun("skip_allreduce.py", 3))
    jobs.wait_for_lines(job, b"ready", 3)
    jobs.wait_until_blocked(job, 3)  # ranks 0 and 2 in the all_reduce, rank 1 in the barrier
    doc, elapsed, code = _attach(job.pid)
    assert elapsed < 15, f"attach took {elapsed:.1f}s"
    assert code == 1
    finding = next(f for f in doc["findings"] if f["id"] == "collective-mismatch")
    assert finding["ranks"] == [1]
    detail = finding["evidence"][0]["detail"]
    assert "barrier at skip_allreduce.py:16" in detail and "all_reduce at skip_allreduce.py:15" in detail
    groups = doc["stacks"]["groups"]
    odd = [g for g in groups if g["odd_one_out"]]
    assert [g["ranks"] for g in odd] == [[1]]
    assert sorted(next(g for g in groups if not g["odd_one_out"])["ranks"]) == [0, 2]
    ranks = {r["rank"]: r for r in doc["facts"]["live.ranks"]}
    assert set(ranks) == {0, 1, 2} and ranks[1]["frame"] == "skip_allreduce.py:16 (main)"
    assert doc["facts"]["live.launcher"] == "torchrun"


def test_attach_reports_uneven_last_batch_and_who_ran_out(jobs):
    job = jobs.start(torchrun("uneven_batches.py", 2))
    jobs.wait_for_lines(job, b"rank 1 step 3", 1)
    jobs.wait_until_blocked(job, 2)  # rank 0 waits in backward for the all-reduce rank 1 never joins
    doc, _elapsed, _code = _attach(job.pid)
    ids = [f["id"] for f in doc["findings"]]
    assert ids[0] == "uneven-last-batch", ids
    finding = doc["findings"][0]
    assert finding["ranks"] == [1]
    assert "rank 1 ran out of data" in finding["evidence"][0]["detail"]
    assert "uneven_batches.py:19" in finding["evidence"][0]["detail"]  # where rank 0 waits: loss.backward()


def test_attach_text_output_shows_the_picture(jobs):
    job = jobs.start(torchrun("skip_allreduce.py", 2))
    jobs.wait_for_lines(job, b"ready", 2)
    jobs.wait_until_blocked(job, 2)
    proc = troubleshoot("attach", str(job.pid), timeout=60)
    text = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr.decode()
    assert "Job: torchrun" in text and "<- odd one out" in text
    assert "all_reduce at skip_allreduce.py:15" in text and "barrier at skip_allreduce.py:16" in text


def test_attach_to_a_missing_pid_is_a_usage_error():
    proc = troubleshoot("attach", "999999999", timeout=60)
    assert proc.returncode == 2
    assert b"no process with PID 999999999" in proc.stderr
