"""`troubleshoot run` on real jobs: passthrough, crash root cause, stall + attach, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from .conftest import JOBS, torchrun, troubleshoot


def _report(path) -> dict:
    return json.loads(path.read_text())


def test_output_passes_through_byte_for_byte(tmp_path, no_leftovers):
    log, report = tmp_path / "job.log", tmp_path / "report.json"
    proc = troubleshoot("run", "--log-file", str(log), "-o", str(report), "--",
                        sys.executable, str(JOBS / "bytes_out.py"), timeout=60)
    out = b"line one\r\nNUL:\x00 bad utf-8:\xff\xfe\nno final newline"
    err = b"to stderr \xe2\x9c\x93\n"
    assert proc.stdout == out
    assert proc.stderr == err
    data = log.read_bytes()
    assert len(data) == len(out) + len(err) and err in data
    assert data.replace(err, b"") == out
    doc = _report(report)
    assert doc["mode"] == "run" and doc["run"]["exit_code"] == 0 and proc.returncode == 0


def test_log_interleaves_stdout_and_stderr_by_whole_lines(tmp_path, no_leftovers):
    """A line written in pieces on one stream is never cut by the other stream's line inside the log."""
    log = tmp_path / "job.log"
    script = ("import sys, time\n"
              "sys.stderr.write('[rank1]:   File \"crash.py\", li'); sys.stderr.flush(); time.sleep(0.5)\n"
              "print('rank 0 initialised', flush=True); time.sleep(0.5)\n"
              "sys.stderr.write('ne 10, in load_shard\\n'); sys.stderr.flush()\n")
    proc = troubleshoot("run", "--log-file", str(log), "-o", str(tmp_path / "r.json"), "--",
                        sys.executable, "-c", script, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stderr == b'[rank1]:   File "crash.py", line 10, in load_shard\n'  # the terminal gets it as written
    assert sorted(log.read_bytes().splitlines()) == [b'[rank1]:   File "crash.py", line 10, in load_shard',
                                                     b"rank 0 initialised"]


def test_run_without_a_command_is_a_usage_error():
    proc = troubleshoot("run", "--", timeout=60)
    assert proc.returncode == 2 and b"nothing to run" in proc.stderr


def test_unknown_command_is_a_usage_error(tmp_path):
    proc = troubleshoot("run", "--log-file", str(tmp_path / "l"), "--", "no-such-launcher-xyz", timeout=60)
    assert proc.returncode == 2 and b"command not found: no-such-launcher-xyz" in proc.stderr


def test_ctrl_c_reaches_the_job_and_still_yields_a_report(tmp_path, no_leftovers):
    report = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "troubleshooter", "run", "--log-file", str(tmp_path / "job.log"), "-o", str(report),
           "--", sys.executable, str(JOBS / "wait_for_sigint.py")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert proc.stdout.readline() == b"waiting\n"
        os.kill(proc.pid, signal.SIGINT)  # what the terminal sends on Ctrl-C
        out, _err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert b"job got SIGINT" in out
    doc = _report(report)
    assert doc["run"]["interrupted"] is True and doc["facts"]["live.interrupted"] is True
    assert doc["run"]["exit_code"] == 130


def test_sigterm_stops_the_job_and_still_yields_a_report(tmp_path, no_leftovers):
    """timeout, Slurm and kill send SIGTERM: the job's group gets it, the report is written, exit code 130."""
    report = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "troubleshooter", "run", "--log-file", str(tmp_path / "job.log"), "-o", str(report),
           "--format", "json", "--", sys.executable, str(JOBS / "wait_for_sigint.py")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert proc.stdout.readline() == b"waiting\n"
        os.kill(proc.pid, signal.SIGTERM)  # troubleshoot alone, as `timeout` or `kill` do
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    doc = _report(report)
    assert doc["run"]["interrupted"] is True and doc["run"]["exit_code"] == -signal.SIGTERM


@pytest.mark.slow
def test_crash_on_rank_1_is_reported_with_its_traceback(tmp_path, no_leftovers):
    log, report = tmp_path / "job.log", tmp_path / "report.json"
    proc = troubleshoot("run", "--stall", "60", "--log-file", str(log), "-o", str(report), "--",
                        *torchrun("crash_rank1.py", 2), timeout=120)
    assert b"rank 0 initialised" in proc.stdout + proc.stderr  # the job's own output reached the terminal
    doc = _report(report)
    assert doc["run"]["exit_code"] == 1 and doc["facts"]["live.exit_code"] == 1
    root = doc["run"]["root_failure"]
    assert root["rank"] == 1 and root["exit_code"] != 0  # 1, or -6 when gloo aborts during teardown
    assert "crash_rank1.py\", line 10, in load_shard" in root["traceback"]
    assert root["traceback"].endswith("RuntimeError: shard 1 is corrupt: cannot decode record 17")
    assert 1 in doc["facts"]["log.failed_ranks"]  # rank 0 may also die of the echo, depending on timing
    first = doc["findings"][0]
    assert first["id"] == "rank-crashed" and first["ranks"] == [1], [f["id"] for f in doc["findings"]]
    assert "shard 1 is corrupt" in first["title"]
    assert proc.returncode == 1


@pytest.mark.slow
def test_stalled_job_is_attached_to_and_stopped(tmp_path, no_leftovers):
    log, report = tmp_path / "job.log", tmp_path / "report.json"
    start = time.monotonic()
    proc = troubleshoot("run", "--stall", "3", "--log-file", str(log), "-o", str(report), "--",
                        *torchrun("skip_allreduce.py", 3), timeout=120)
    elapsed = time.monotonic() - start
    assert b"attaching to the job" in proc.stderr
    doc = _report(report)
    assert doc["run"]["stalled"] is True and doc["run"]["stopped_by_troubleshoot"] is True
    assert elapsed < 100, "the stall must be caught, not the job's own 300 s collective timeout awaited"
    finding = next(f for f in doc["findings"] if f["id"] == "collective-mismatch")
    assert finding["ranks"] == [1]
    odd = [g for g in doc["stacks"]["groups"] if g["odd_one_out"]]
    assert odd and odd[0]["ranks"] == [1] and odd[0]["where"] == "skip_allreduce.py:16 (main)"
    assert proc.returncode == 1
