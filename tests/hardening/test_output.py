"""``-o PATH`` never replaces what is not a regular file, never leaves temporary files, keeps modes."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from troubleshooter.cli import main


def test_fifo_is_written_through_to_its_reader(saved_report: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert main(["report", str(saved_report), "--format", "md", "-o", str(fifo)]) == 1
    reader.join(10)
    assert received and received[0].startswith(b"# DDP diagnosis")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_full_device_gives_clean_error_and_stays_a_device(saved_report: Path, tmp_path: Path, capsys) -> None:
    full = tmp_path / "full"
    try:
        os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # same device as /dev/full
    except (PermissionError, OSError):
        pytest.skip("cannot create a device node here")
    assert main(["report", str(saved_report), "--format", "md", "-o", str(full)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    mode = os.stat(full).st_mode
    assert stat.S_ISCHR(mode) and os.major(os.stat(full).st_rdev) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full", "r.json"]


def test_directory_is_refused_and_nothing_left_behind(saved_report: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "out"
    target.mkdir()
    assert main(["report", str(saved_report), "-o", str(target)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert list(target.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["out", "r.json"]


def test_read_only_file_is_refused_not_replaced(saved_report: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "r.md"
    target.write_text("keep me\n")
    target.chmod(0o444)
    assert main(["report", str(saved_report), "-o", str(target)]) == 2
    assert "read-only" in capsys.readouterr().err
    assert target.read_text() == "keep me\n" and stat.S_IMODE(target.stat().st_mode) == 0o444


def test_regular_file_replaced_keeping_its_mode(saved_report: Path, tmp_path: Path) -> None:
    target = tmp_path / "r.md"
    target.write_text("old\n")
    target.chmod(0o640)
    assert main(["report", str(saved_report), "-o", str(target)]) == 1
    assert target.read_text().startswith("# DDP diagnosis") and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.md"]


def test_new_file_gets_the_umask_mode(saved_report: Path, tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        assert main(["report", str(saved_report), "-o", str(tmp_path / "sub" / "r.html")]) == 1
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "sub" / "r.html").stat().st_mode) == 0o644


def test_symlink_target_is_written_link_kept(saved_report: Path, tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("old\n")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    assert main(["report", str(saved_report), "-o", str(link)]) == 1
    assert link.is_symlink() and real.read_text().startswith("# DDP diagnosis")
