"""``bench/scan_throughput.py`` runs end to end on a small project, with its phase breakdown."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "tests" / "real" / "constructs" / "print_silenced_in_helper_module"


def _bench():
    spec = importlib.util.spec_from_file_location("scan_throughput", ROOT / "bench" / "scan_throughput.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_the_phase_breakdown_times_the_scan_and_leaves_the_scanner_as_it_was(capsys):
    from troubleshooter.scan.model import ModuleIndex
    from troubleshooter.scan.project import Project
    from troubleshooter.scan.runner import FileScanner

    originals = (Project.add, FileScanner.check, ModuleIndex.__init__)
    bench = _bench()
    bench.main(["--project", "--phases", "--repeat", "1", "--cpu", str(PROJECT)])
    out = capsys.readouterr().out
    assert "ratio scan / parse:" in out and "phases of the least disturbed timed scan" in out
    for phase in ("parse (ast)", "project: summary", "checks, all files"):
        assert phase in out
    assert (Project.add, FileScanner.check, ModuleIndex.__init__) == originals  # the timing wrappers are gone


def test_without_phases_there_is_no_breakdown(capsys):
    _bench().main(["--project", "--repeat", "1", str(PROJECT)])
    out = capsys.readouterr().out
    assert "ratio scan / parse:" in out and "phases of" not in out
