"""``bench/logs_throughput.py`` runs end to end: grep, the analyzer, and a baseline checkout in turn."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("grep") is None, reason="needs grep")
def test_the_bench_times_grep_the_analyzer_and_a_baseline_on_its_own_file(capsys, tmp_path):
    spec = importlib.util.spec_from_file_location("logs_throughput", ROOT / "bench" / "logs_throughput.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    before = set(Path(bench.tempfile.gettempdir()).glob("ddp-logs-bench-*"))
    assert bench.main(["--mb", "1", "--repeat", "1", "--baseline", str(ROOT)]) == 0
    out = capsys.readouterr().out
    assert "ratio analyzer/grep" in out and "cpu time: grep" in out
    assert f"baseline {ROOT} (" in out and "x grep; cpu" in out
    assert set(Path(bench.tempfile.gettempdir()).glob("ddp-logs-bench-*")) == before  # its own file, removed
