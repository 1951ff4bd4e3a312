"""`troubleshoot --auto` end to end: real report, exit codes, crashes and hangs isolated, Ctrl-C keeps evidence."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from troubleshooter.cli import main

PLUGINS = textwrap.dedent('''
    import os, time
    from troubleshooter.core.facts import FactSpec
    from troubleshooter.core.probe import NODE, WORLD, Probe

    class Crashes(Probe):
        """Raises, to show a crash stays contained."""
        id = "crashes"; title = "Crashes"; scope = NODE; default = False
        def run(self, ctx):
            raise RuntimeError("boom")

    class Sleeps(Probe):
        """Sleeps far past its timeout, with a child of its own."""
        id = "sleeps"; title = "Sleeps"; scope = NODE; default = False; timeout_s = 1
        def run(self, ctx):
            import subprocess
            subprocess.Popen(["sleep", "300"])
            time.sleep(300)

    class Reports(Probe):
        """Reports a fact that an overlay rule turns into a warning."""
        id = "reports"; title = "Reports"; scope = NODE; default = False
        produces = (FactSpec("demo.level", "int", "a level"), FactSpec("demo.token", "str", "a secret"))
        def run(self, ctx):
            return self.result({"demo.level": 7, "demo.token": ctx.env.get("HF_TOKEN", "")}, message="level 7")

    class Lags(Probe):
        """World probe where rank 1 never arrives at the all_reduce."""
        id = "lags"; title = "Lags"; scope = WORLD; default = False; timeout_s = 4
        def run(self, ctx):
            import torch, torch.distributed as dist
            ctx.phase("prepare")
            if ctx.rank == 1:
                time.sleep(300)
            ctx.phase("all_reduce")
            dist.all_reduce(torch.ones(1))
            return self.result()
''')

OVERLAY_CHECK = textwrap.dedent('''
    id: demo-level-high
    finding: cpu-oversubscribed
    severity: warning
    when: {fact: demo.level, op: gt, value: 5}
    evidence: [demo.level]
''')


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "demo_probes.py").write_text(PLUGINS)
    (tmp_path / "rules" / "checks").mkdir(parents=True)
    (tmp_path / "rules" / "checks" / "demo-level-high.yaml").write_text(OVERLAY_CHECK)
    return tmp_path


def no_children_left() -> bool:
    me = psutil.Process()
    for _ in range(50):
        if not [c for c in me.children(recursive=True) if c.status() != psutil.STATUS_ZOMBIE]:
            return True
        time.sleep(0.1)
    return False


def read(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.slow
def test_default_auto_writes_a_real_report(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    rc = main(["--auto", "-q", "--format", "json", "-o", str(out)])
    doc = read(out)
    assert doc["schema"] == "ddp-troubleshooter/report@1" and doc["mode"] == "auto"
    assert doc["world"]["size"] == 2 and doc["world"]["backend"] in ("gloo", "nccl")
    names = {p["name"] for p in doc["probes"]}
    assert {"launcher", "collective"} <= names
    assert {p["rank"] for p in doc["probes"] if p["name"] == "collective"} == {0, 1}
    assert rc == (1 if any(f["severity"] != "info" for f in doc["findings"]) else 0)
    assert no_children_left()


def test_overlay_rule_warning_gives_exit_1_and_redacts(plugins: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_abcdefghijklmnopqrstuvwxyz0123456789")
    out = plugins / "r.json"
    rc = main(["--auto", "-q", "--probes", str(plugins / "probes"), "--rules", str(plugins / "rules"),
               "--probe", "reports", "-o", str(out)])
    doc = read(out)
    assert rc == 1
    [finding] = doc["findings"]
    assert finding["id"] == "cpu-oversubscribed" and finding["severity"] == "warning"
    assert finding["evidence"][0]["facts"] == {"demo.level": 7}
    assert "hf_abcdefghij" not in out.read_text()


def test_crashing_probe_is_contained(plugins: Path) -> None:
    out = plugins / "r.json"
    main(["--auto", "-q", "--probes", str(plugins / "probes"), "--probe", "crashes", "--probe", "reports",
          "-o", str(out)])
    probes = {p["name"]: p for p in read(out)["probes"]}
    assert probes["crashes"]["status"] == "error"
    assert "probe did not complete: RuntimeError: boom" in probes["crashes"]["message"]
    assert probes["reports"]["status"] == "pass"


def test_summary_does_not_claim_all_clear_when_a_probe_crashed(plugins: Path, capsys) -> None:
    assert main(["--auto", "--probes", str(plugins / "probes"), "--probe", "crashes"]) == 0
    out = capsys.readouterr().out
    assert "☠ did not complete: crashes error: probe did not complete: RuntimeError: boom" in out
    assert "No issues found!" not in out and "1 did not" in out


def test_hanging_probe_times_out_and_its_children_are_reaped(plugins: Path) -> None:
    out = plugins / "r.json"
    started = time.monotonic()
    main(["--auto", "-q", "--probes", str(plugins / "probes"), "--probe", "sleeps", "-o", str(out)])
    assert time.monotonic() - started < 20
    [probe] = read(out)["probes"]
    assert probe["status"] == "timeout" and "did not finish within 1 s" in probe["message"]
    assert no_children_left()
    assert not [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", "300"]]


@pytest.mark.slow
def test_world_hang_names_the_rank_that_did_not_arrive(plugins: Path) -> None:
    out = plugins / "r.json"
    started = time.monotonic()
    main(["--auto", "-q", "--probes", str(plugins / "probes"), "--probe", "lags", "-o", str(out)])
    assert time.monotonic() - started < 40
    doc = read(out)
    assert doc["facts"]["world.stuck_ranks"] == [1]
    assert doc["facts"]["world.waiting_ranks"] == [0]
    assert doc["facts"]["world.stuck_phases"] == {"0": "lags:all_reduce", "1": "lags:prepare"}
    assert {p["rank"]: p["status"] for p in doc["probes"]} == {0: "timeout", 1: "timeout"}
    assert no_children_left()


@pytest.mark.slow
def test_ctrl_c_still_writes_a_partial_report(plugins: Path) -> None:
    out = plugins / "r.json"
    env = {**os.environ, "PYTHONPATH": str(plugins)}
    # A Ctrl-C at a terminal reaches a process whose SIGINT is the default; a test run from a background job
    # (nohup, `&`) inherits SIGINT ignored, which Python then honours, so the child gets the default back.
    proc = subprocess.Popen([sys.executable, "-m", "troubleshooter", "--auto", "-q", "--probes",
                             str(plugins / "probes"), "--probe", "reports", "--probe", "lags", "--timeout", "60",
                             "-o", str(out)], env=env, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        time.sleep(6)
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=30) == 130
    finally:  # never leave the tool behind to fail the next tests' no-children checks
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    doc = read(out)
    assert doc["interrupted"] is True
    assert any(p["name"] == "reports" and p["status"] == "pass" for p in doc["probes"])
    assert not psutil.pid_exists(proc.pid) or psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.slow
def test_ranks_exit_when_the_tool_is_killed(plugins: Path) -> None:
    """SIGKILL cannot be caught: the ranks (each in a session of its own) notice their supervisor is gone."""
    proc = subprocess.Popen([sys.executable, "-m", "troubleshooter", "--auto", "-q", "--probes",
                             str(plugins / "probes"), "--probe", "lags", "--timeout", "60",
                             "-o", str(plugins / "r.json")], start_new_session=True)
    ranks: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 60
        while len(ranks) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            ranks = [c for c in psutil.Process(proc.pid).children()
                     if "troubleshooter.run.rank_worker" in " ".join(c.cmdline())]
        assert len(ranks) == 2
        time.sleep(1)  # both ranks past start-up, inside the stuck probe
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        _, alive = psutil.wait_procs(ranks, timeout=10)
        assert not alive
    finally:
        for rank in ranks:
            if rank.is_running():
                rank.kill()


@pytest.mark.parametrize("argv, message", [
    (["--auto", "--script", "/nonexistent/train.py"], "/nonexistent/train.py: no such file"),
    (["--auto", "--rules", "/nonexistent/rules"], "rules directory does not exist"),
    (["--auto", "--probe", "nosuchprobe"], "unknown probe 'nosuchprobe'"),
    (["--auto", "--nproc", "0", "--probe", "launcher"], "--nproc must be at least 1"),
    (["--auto", "--model", "justaname"], "--model 'justaname': expected MODULE:CALLABLE"),
    (["--auto", "--data", "no_such_module_xyz:load"], "no module named 'no_such_module_xyz'"),
])
def test_bad_input_exit_2(argv: list[str], message: str, capsys) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_internal_error_exit_3_without_traceback(monkeypatch, capsys) -> None:
    import troubleshooter.cli.commands as commands

    def explode(args):
        raise ZeroDivisionError("division by zero")
    monkeypatch.setattr(commands, "list_probes", explode)
    assert main(["--list-probes"]) == 3
    err = capsys.readouterr().err
    assert "internal error: ZeroDivisionError" in err and "Traceback" not in err


def test_cancel_kills_a_running_node_probe_at_once(plugins: Path) -> None:
    import threading

    from troubleshooter.core.registry import Registry
    from troubleshooter.run.node_runner import run_isolated

    probe = Registry.load([plugins / "probes"]).get("sleeps")
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    started = time.monotonic()
    result = run_isolated(probe, dict(os.environ), {}, {}, [str(plugins / "probes")], timeout_s=60, cancel=cancel)
    assert (result.status, result.message) == ("skipped", "cancelled")
    assert time.monotonic() - started < 5
    assert no_children_left()


@pytest.mark.slow
def test_cancel_tears_the_world_down(plugins: Path) -> None:
    import threading

    from troubleshooter.core.registry import Registry
    from troubleshooter.run.local_world import run_world
    from troubleshooter.run.options import RunOptions
    from troubleshooter.run.plan import make_plan

    opts = RunOptions(only=("lags",), probe_dirs=(str(plugins / "probes"),), timeout_s=120)
    plan = make_plan(Registry.load([plugins / "probes"]), opts)
    cancel = threading.Event()
    threading.Timer(3, cancel.set).start()
    started = time.monotonic()
    outcome = run_world(plan.rank_job(opts, {}, dict(os.environ)), 2, cancel=cancel)
    assert time.monotonic() - started < 15
    assert outcome.teardown_facts == {"world.teardown_reason": "cancelled by the user"}
    assert no_children_left()


def test_scanned_dataloader_workers_reach_the_system_probe(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("import torch.distributed as dist\nfrom torch.utils.data import DataLoader\n"
                      "dist.init_process_group('gloo')\nloader = DataLoader(ds, num_workers=16)\n")
    out = tmp_path / "r.json"
    main(["--auto", "-q", "--probe", "system", "--script", str(script), "-o", str(out)])
    [system] = read(out)["probes"]
    assert system["facts"]["system.dataloader_workers"] == 16
