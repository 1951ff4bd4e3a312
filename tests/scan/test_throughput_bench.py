"""``bench/scan_throughput.py`` runs end to end on a small project, with its phase breakdown."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

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


def test_help_lists_the_options_and_exits_cleanly(capsys):
    with pytest.raises(SystemExit) as stop:
        _bench().main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "usage:" in out and "--project" in out and "--repeat" in out and "ratio" not in out


@pytest.mark.parametrize("argv, says", [
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--repeat", "0", str(PROJECT)], "--repeat must be at least 1"),
    (["--phases", str(PROJECT)], "--phases needs --project"),
    (["/nonexistent/ddp-ts-bench-root"], "does not exist"),
])
def test_a_bad_command_line_is_a_usage_error_not_a_ratio(capsys, argv, says):
    with pytest.raises(SystemExit) as stop:
        _bench().main(argv)
    assert stop.value.code == 2
    captured = capsys.readouterr()
    assert says in captured.err and "ratio" not in captured.out


def test_a_root_without_python_files_is_a_usage_error(capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("no python here\n")
    with pytest.raises(SystemExit) as stop:
        _bench().main(["--repeat", "1", str(tmp_path)])
    assert stop.value.code == 2
    captured = capsys.readouterr()
    assert "no Python file under ROOT" in captured.err and "ratio" not in captured.out
