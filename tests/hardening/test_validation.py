"""Bad input gives exit 2 with the file and field, never exit 3; nothing is written for a bad report."""

from __future__ import annotations

import gzip
import json
import os
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from troubleshooter.cli import main


def _valid() -> dict:
    from tests.render.test_render import sample_doc

    return json.loads(json.dumps(sample_doc()))


def _set(path: str, value: Any) -> Callable[[dict], None]:
    def apply(doc: dict) -> None:
        *parents, last = path.split("/")
        target = doc
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if value is KeyError:
            del target[last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return apply


@pytest.mark.parametrize("change, field", [
    (_set("findings/0/severity", KeyError), "findings[0]: 'severity' is a required property"),
    (_set("findings/0/id", KeyError), "findings[0]: 'id' is a required property"),
    (_set("findings/1", "a finding that is a string"), "findings[1]: 'a finding that is a string' is not of type"),
    (_set("probes/0/duration_s", "slow"), "probes[0].duration_s: 'slow' is not of type"),
    (_set("probes/0/duration_s", int("9" * 4000)), "probes[0].duration_s"),
    (_set("world", ["not", "a", "mapping"]), "world: ['not', 'a', 'mapping'] is not of type 'object'"),
    (_set("facts", "a string"), "facts: 'a string' is not of type 'object'"),
    (_set("findings/2/location", {"path": "x.py", "line": "forty-two"}), "findings[2].location.line"),
    (_set("findings/0/evidence/0/rank", "zero"), "findings[0].evidence[0].rank"),
    (_set("ranks/0/probes", "x"), "ranks[0].probes"),
])
@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_malformed_report_exit_2_and_nothing_written(tmp_path: Path, capsys, change, field: str, fmt: str) -> None:
    doc = _valid()
    change(doc)
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(doc))
    out = tmp_path / f"out.{fmt}"
    assert main(["report", str(saved), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{saved}: not a valid" in err and field in err
    assert not out.exists()


@pytest.mark.parametrize("text", ['{"schema": "ddp-troubleshooter/report@1", "findings": [], "x": NaN}',
                                  '{"schema": "ddp-troubleshooter/report@1", "findings": [], "x": ' + "9" * 5000 + "}",
                                  "[" * 100_000 + "]" * 100_000, "\xff\xfe"])
def test_unparseable_report_exit_2(tmp_path: Path, text: str) -> None:
    saved = tmp_path / "r.json"
    saved.write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode())
    assert main(["report", str(saved), "--format", "md"]) == 2


def test_valid_report_still_renders(saved_report: Path, tmp_path: Path) -> None:
    assert main(["report", str(saved_report), "-o", str(tmp_path / "r.md")]) == 1


def test_shipped_schema_accepts_what_the_tool_writes(tmp_path: Path) -> None:
    from troubleshooter.report.document import schema_problems

    log = tmp_path / "x.log"
    log.write_text("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert main(["logs", str(log), "--format", "json", "-o", str(tmp_path / "l.json")]) == 1
    assert schema_problems(json.loads((tmp_path / "l.json").read_text())) == []
    assert schema_problems(_valid()) == []


def test_corrupt_gz_exit_2(tmp_path: Path, capsys) -> None:
    data = bytearray(gzip.compress(b"RuntimeError: CUDA out of memory\n" * 1000))
    for i in range(20, 60):
        data[i] ^= 0xFF
    bad = tmp_path / "bad.log.gz"
    bad.write_bytes(bytes(data))
    assert main(["logs", str(bad)]) == 2
    assert str(bad) in capsys.readouterr().err


def test_truncated_gz_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "cut.log.gz"
    bad.write_bytes(gzip.compress(b"x\n" * 100000)[:200])
    assert main(["logs", str(bad)]) == 2


def test_log_without_newline_longer_than_a_line_is_analysed(tmp_path: Path, capsys) -> None:
    log = tmp_path / "long.log"
    log.write_bytes(b"x" * (2 << 20) + b" RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB")
    assert main(["logs", str(log), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["facts"]["log.lines"] == 1
    assert doc["findings"][0]["id"] == "out-of-memory" and doc["findings"][0]["location"]["line"] == 1


def test_scan_reads_a_fifo(tmp_path: Path, capsys) -> None:
    fifo = tmp_path / "train.py"
    os.mkfifo(fifo)
    source = b"import torch\nfrom torch.utils.data import DataLoader\ndl = DataLoader(ds)\n"
    threading.Thread(target=lambda: fifo.write_bytes(source), daemon=True).start()
    assert main(["scan", str(fifo), "--format", "json"]) in (0, 1)
    captured = capsys.readouterr()
    assert "no such file" not in captured.err and json.loads(captured.out)["mode"] == "scan"


def test_attach_without_py_spy_exit_2(monkeypatch, capsys) -> None:
    from troubleshooter.live import stacks

    monkeypatch.setattr(stacks, "pyspy_path", lambda: None)
    assert main(["attach", str(os.getpid())]) == 2
    assert "py-spy is not installed" in capsys.readouterr().err


def test_readme_and_help_document_exit_130() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "`130` interrupted" in readme
    from troubleshooter.cli import build_parser
    assert "130 interrupted" in build_parser().epilog


def test_error_messages_quoting_the_input_are_redacted_and_inert(tmp_path: Path, capsys) -> None:
    doc = _valid()
    doc["facts"] = "MY_DB_PASSWORD=hunter2hunter2 \x1b]0;title\x07"
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(doc))
    assert main(["report", str(saved)]) == 2
    err = capsys.readouterr().err
    assert "facts:" in err and "hunter2hunter2" not in err and "\x1b" not in err
