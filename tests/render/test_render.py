"""Reports: gold files for Markdown/HTML/text, JSON schema, re-rendering, autoescape, redaction."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from troubleshooter.cli import main
from troubleshooter.core.engine import Observations, evaluate
from troubleshooter.core.facts import Fact, Facts
from troubleshooter.core.probe import ProbeResult
from troubleshooter.report.render import render, render_terminal
from troubleshooter.report.document import SCHEMA, build_report
from troubleshooter.core.ruleset import load_rules

HERE = Path(__file__).resolve().parent
MINI = HERE.parent / "data" / "mini_rules"
GOLD = HERE / "gold"


def sample_doc() -> dict:
    rules = load_rules(base=MINI)
    hits = [{"path": "train.py", "line": 42, "detail": "DataLoader `dl` <b>has no sampler</b>",
             "vars": {"loader": "dl", "dataset": "ds"}}]
    world = Facts([Fact("net.master_reachable", False, "network"), Fact("net.master_addr", "10.0.0.9", "network"),
                   Fact("net.master_port", 29500, "network"), Fact("world.stuck_ranks", [1], "run"),
                   Fact("scan.missing-distributed-sampler", hits, "scan"),
                   Fact("env.HF_TOKEN", "hf_abcdefghijklmnopqrstuvwxyz0123456789", "launcher")])
    ranks = {r: Facts([Fact("step.p50_s", 0.2 + 2 * r, "trainstep", r)]) for r in (0, 1)}
    obs = Observations(world, ranks)
    results = [ProbeResult("network", "ok", {"net.master_reachable": False}, "10.0.0.9:29500 refused", host="h", duration_s=0.012),
               ProbeResult("trainstep", "ok", {"step.p50_s": 0.2}, rank=0, host="h", duration_s=1.5,
                           details={"steps": [{"step": 1, "seconds": 0.2}, {"step": 2, "seconds": 0.21}]}),
               ProbeResult("trainstep", "ok", {"step.p50_s": 2.2}, rank=1, host="h", duration_s=4.5)]
    doc = build_report("auto", evaluate(rules, obs), results, obs, {"size": 2, "backend": "gloo", "launcher": "local"})
    return doc


def scrub(text: str) -> str:
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+\-]\d\d:\d\d", "<TIME>", text)
    text = re.sub(r"ddp-troubleshooter [0-9][^ <\n]*", "ddp-troubleshooter <VERSION>", text)
    text = re.sub(r"(tool version \| )[^ |]+", r"\1<VERSION>", text)
    return text.replace(os.uname().nodename, "<HOST>")


@pytest.mark.parametrize("fmt, name", [("md", "report.md"), ("html", "report.html"), ("text", "report.txt")])
def test_gold(fmt: str, name: str) -> None:
    actual = scrub(render(sample_doc(), fmt))
    gold = GOLD / name
    if not gold.exists() or os.environ.get("UPDATE_GOLD"):
        gold.write_text(actual)
    if actual != gold.read_text():
        (HERE / f"actual_{name}").write_text(actual)
        pytest.fail(f"{name} differs from the gold file; actual output saved to tests/render/actual_{name}")


def test_json_document_follows_schema() -> None:
    doc = json.loads(render(sample_doc(), "json"))
    assert doc["schema"] == SCHEMA and doc["mode"] == "auto"
    assert set(doc) >= {"tool_version", "created", "symptom", "world", "findings", "probes", "facts", "ranks"}
    ids = [f["id"] for f in doc["findings"]]
    assert ids[0] == "network-unreachable" and "collective-timeout" in ids
    sampler = next(f for f in doc["findings"] if f["id"] == "missing-distributed-sampler")
    assert sampler["location"] == {"path": "train.py", "line": 42}
    assert {p["status"] for p in doc["probes"]} <= {"pass", "warn", "fail", "error", "skipped", "timeout"}
    assert doc["probes"][0]["status"] == "fail"  # its facts raised an error finding
    assert [r["rank"] for r in doc["ranks"]] == [0, 1]


def test_secrets_are_redacted_everywhere() -> None:
    doc = sample_doc()
    for fmt in ("json", "md", "html", "text"):
        assert "hf_abcdefghijklmnopqrstuvwxyz" not in render(doc, fmt)


def test_html_is_self_contained_and_escaped() -> None:
    html = render(sample_doc(), "html")
    assert "<b>has no sampler</b>" not in html and "&lt;b&gt;has no sampler&lt;/b&gt;" in html
    assert not re.search(r"<(script|link)[^>]+(src|href)=", html)
    assert "<pre" in html  # fix code rendered


def test_report_command_rerenders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(sample_doc()))
    assert main(["report", str(saved), "--format", "html", "-o", str(tmp_path / "r.html")]) == 1
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["report", str(saved), "-o", str(tmp_path / "r.md")]) == 1
    assert (tmp_path / "r.md").read_text().startswith("# DDP diagnosis")


@pytest.mark.parametrize("content, message", [
    ("{not json", "r.json:1: not valid JSON"),
    ('{"schema": "other"}', 'expected a report with "schema"'),
])
def test_report_command_bad_input_exit_2(tmp_path: Path, capsys, content: str, message: str) -> None:
    bad = tmp_path / "r.json"
    bad.write_text(content)
    assert main(["report", str(bad), "--format", "md"]) == 2
    assert message in capsys.readouterr().err


def test_report_command_missing_file(capsys) -> None:
    assert main(["report", "/nonexistent/r.json"]) == 2
    assert "/nonexistent/r.json: cannot read" in capsys.readouterr().err


def test_terminal_summary_lines() -> None:
    text = render_terminal(sample_doc(), color=False)
    assert "[✗] network (10.0.0.9:29500 refused)" in text
    assert text.strip().splitlines()[-1].startswith("! Found issues in")
    clean = build_report("auto", [], [], None, {})
    assert render_terminal(clean, color=False).strip() == "• No issues found!"
