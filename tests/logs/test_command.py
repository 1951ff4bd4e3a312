"""``troubleshoot logs``: formats, stdin, .gz, exit codes, errors."""

from __future__ import annotations

import gzip
import io
import json
import sys

from troubleshooter.cli import main

from .conftest import CORPUS

OOM_LOG = CORPUS / "torchrun_oom_rank3_timeouts.log"
HEALTHY = CORPUS / "healthy_srun_labelled.log"


def test_json_report_in_logs_mode_root_cause_first(capsys):
    assert main(["logs", str(OOM_LOG), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "ddp-troubleshooter/report@1" and doc["mode"] == "logs"
    assert doc["findings"][0]["id"] == "out-of-memory"
    assert doc["findings"][0]["evidence"][0]["rank"] == 3
    assert doc["facts"]["log.root_cause"]["rank"] == 3
    assert doc["facts"]["log.suppressed"]


def test_text_names_the_root_cause_and_echoes(capsys):
    assert main(["logs", str(OOM_LOG)]) == 1
    out = capsys.readouterr().out
    assert "Root cause (first failure): out-of-memory on rank 3" in out
    assert "Downstream echoes not reported separately: collective-timeout" in out


def test_healthy_log_exits_zero(capsys):
    assert main(["logs", str(HEALTHY)]) == 0
    assert "No issues found" in capsys.readouterr().out


def test_stdin_and_gzip_together(tmp_path, monkeypatch, capsys):
    gz = tmp_path / "rank3.log.gz"
    with gzip.open(gz, "wb") as fh:
        fh.write(OOM_LOG.read_bytes())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(HEALTHY.read_bytes())))
    out = tmp_path / "report.json"
    assert main(["logs", "-", str(gz), "-o", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert doc["facts"]["log.files"] == ["<stdin>", str(gz)]
    assert doc["facts"]["log.root_cause"]["path"] == str(gz)


def test_unreadable_log_is_a_usage_error(tmp_path, capsys):
    assert main(["logs", str(tmp_path / "missing.log")]) == 2
    assert "missing.log: No such file or directory" in capsys.readouterr().err
    bad = tmp_path / "bad.log.gz"
    bad.write_bytes(b"not gzip")
    assert main(["logs", str(bad)]) == 2
    assert "bad.log.gz" in capsys.readouterr().err


def test_invalid_signature_overlay_is_reported(tmp_path, capsys):
    (tmp_path / "signatures").mkdir()
    (tmp_path / "signatures" / "site.yaml").write_text(
        "group: site\nsignatures:\n  - id: x\n    pattern: '(oops'\n    note: n\n    finding: nccl-error\n    priority: 5\n")
    assert main(["logs", str(HEALTHY), "--rules", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "pattern does not compile" in err and "site.yaml:4" in err


def test_site_signature_overlay_is_used(tmp_path, capsys):
    (tmp_path / "signatures").mkdir()
    (tmp_path / "signatures" / "site.yaml").write_text(
        "group: site\nsignatures:\n  - id: site-quota\n    pattern: 'Disk quota exceeded'\n    note: our cluster\n"
        "    finding: shm-too-small\n    priority: 90\n")
    log = tmp_path / "job.log"
    log.write_text("0: OSError: [Errno 122] Disk quota exceeded\n")
    assert main(["logs", str(log), "--rules", str(tmp_path), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["findings"][0]["id"] == "shm-too-small"


def test_report_formats_follow_the_output_extension(tmp_path):
    """-o r.html / r.md write the templated report, not terminal text under an .html name."""
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    assert main(["logs", str(OOM_LOG), "-o", str(html)]) == 1
    assert main(["logs", str(OOM_LOG), "-o", str(md)]) == 1
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and "out-of-memory" in page and "Root cause (first" not in page
    assert md.read_text().startswith("# DDP diagnosis (logs)") and "`out-of-memory`" in md.read_text()
