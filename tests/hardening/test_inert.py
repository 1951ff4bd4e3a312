"""User text is inert: no terminal control sequences, no Markdown/HTML injection in any report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from troubleshooter.cli import main
from troubleshooter.report.inert import md_block, md_code, md_text, visible, visible_keeping_colour
from troubleshooter.report.render import render, render_terminal

ESCAPES = "\x1b]0;pwned title\x07 \x1b[2J\x1b[H \x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ \x07 \x9b31m \u202e \x1b lone"
HOSTILE = "<img src=x onerror=alert(1)> [click](javascript:alert(1)) ![i](http://x/y.png)"


def hostile_log(tmp_path: Path) -> Path:
    log = tmp_path / "x.log"
    log.write_text("[rank1]: Traceback (most recent call last):\n"
                   '[rank1]:   File "train.py", line 3, in <module>\n'
                   "[rank1]:     x = '```'  # closes a fence\n"
                   f"[rank1]: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB {ESCAPES} {HOSTILE}\n"
                   "# Fake heading\n")
    return log


def no_control(text: str) -> None:
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", text), repr(text[:200])


def test_logs_text_shows_escape_sequences_instead_of_running_them(tmp_path: Path, capsys) -> None:
    assert main(["logs", str(hostile_log(tmp_path))]) == 1
    out = capsys.readouterr().out
    no_control(out)
    # complete terminal sequences (title, clear screen, hyperlink) are removed before the log is read;
    # the stray controls left are shown as pictures or escapes, never sent to the terminal
    assert "pwned title" not in out and "evil.example" not in out
    assert "click ␇" in out and "\\x9b31m" in out and "\\u202e" in out and "␛ lone" in out


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_report_of_a_hostile_log_is_inert(tmp_path: Path, capsys, fmt: str) -> None:
    saved = tmp_path / "r.json"
    assert main(["logs", str(hostile_log(tmp_path)), "--format", "json", "-o", str(saved)]) == 1
    assert main(["report", str(saved), "--format", fmt, "-o", str(tmp_path / f"r.{fmt}")]) == 1
    out = (tmp_path / f"r.{fmt}").read_text()
    no_control(out)
    if fmt == "json":
        assert "click \\u0007 \\u009b31m \\u202e \\u001b lone" in out  # stray controls kept, escaped, in the data
    if fmt == "html":
        assert "<img" not in out and "javascript:alert" not in out.replace("[click](javascript:alert(1))", "")


def test_terminal_rendering_of_a_saved_report_is_inert(tmp_path: Path) -> None:
    saved = tmp_path / "r.json"
    assert main(["logs", str(hostile_log(tmp_path)), "--format", "json", "-o", str(saved)]) == 1
    no_control(re.sub(r"\x1b\[[0-9;]*m", "", render_terminal(json.loads(saved.read_text()), color=True)))


def _html_of_markdown(md: str) -> str:
    """How a Markdown viewer that allows raw HTML (GitHub, most wikis) would show the report."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(md)


def test_markdown_report_raises_no_html_link_image_or_heading(tmp_path: Path) -> None:
    from tests.render.test_render import sample_doc

    doc = sample_doc()
    doc["findings"][0]["evidence"].append({"source": "logs", "detail": f"# Fake heading {HOSTILE}", "path": "a`b.py"})
    doc["probes"][0]["message"] = HOSTILE
    doc["facts"]["user.note"] = HOSTILE
    doc["run"] = {"command": "python train.py", "root_failure": {"rank": 1, "host": "<b>h</b>",
                                                                 "traceback": "line 1\n```\n# Heading\n<img src=x onerror=alert(1)>"}}
    html = _html_of_markdown(render(doc, "md"))
    assert "<img" not in html and 'href="javascript:' not in html and "<b>h</b>" not in html
    assert "<h1>Heading" not in html and "<h1>Fake" not in html
    assert "# Heading\n&lt;img src=x onerror=alert(1)&gt;" in html  # the whole traceback stays in its code block


def _viewer(md: str) -> str:
    """A permissive CommonMark viewer: raw HTML on, and every link target accepted (javascript: included)."""
    parser = MarkdownIt("commonmark", {"html": True}).enable("table")
    parser.validateLink = lambda url: True
    return parser.render(md)


def _assert_inert_html(html: str) -> None:
    assert not re.search(r"<(img|b|script|a)\b", html), html
    assert 'href="javascript:' not in html and 'src="javascript:' not in html


def _hostile_finding() -> dict:
    return {"id": "unrecognized-failure", "severity": "error", "category": "code",
            "title": f"The run failed on rank 1: ValueError: {HOSTILE} <b>x</b> (no known diagnosis matched)",
            "why": f"Seen while {HOSTILE} was loading.",
            "fix": f"Start from the first error at {HOSTILE}:\n\n```text\nValueError: {HOSTILE}\n```\n\n"
                   f"- then [read it](javascript:alert(2)) <script>x</script>\n- `<N/A>` stays code\n",
            "evidence": [{"source": "log", "rank": 1, "detail": HOSTILE}]}


def test_finding_title_why_and_fix_raise_no_html_or_link_in_markdown() -> None:
    from tests.render.test_render import sample_doc

    doc = sample_doc()
    doc["findings"] = [_hostile_finding()]
    md = render(doc, "md")
    _assert_inert_html(_viewer(md))
    assert f"```text\nValueError: {HOSTILE}\n```" in md  # inside a code block a value stays as written
    assert "`<N/A>` stays code" in md  # the rule's own Markdown in an untouched block is kept
    assert "onerror=alert(1)" in md  # escaped, not dropped


def test_unrecognized_failure_of_a_hostile_log_is_inert_in_markdown_and_html(tmp_path: Path) -> None:
    log = tmp_path / "u.log"
    log.write_text("[rank1]: Traceback (most recent call last):\n"
                   '[rank1]:   File "train.py", line 3, in <module>\n'
                   f"[rank1]: ValueError: {HOSTILE} <b>bold</b>\n")
    saved = tmp_path / "u.json"
    assert main(["logs", str(log), "--format", "json", "-o", str(saved)]) == 1
    doc = json.loads(saved.read_text())
    assert any("<img" in f["title"] for f in doc["findings"])  # the user's exception text is in a title
    _assert_inert_html(_viewer(render(doc, "md")))
    page = render(doc, "html")
    assert "<img" not in page and "<b>bold" not in page and 'href="javascript:' not in page


def test_tui_diagnosis_markdown_is_inert() -> None:
    from troubleshooter.tui.widgets.finding_view import diagnosis_markdown

    finding = _hostile_finding()
    finding["evidence"][0].update(path="a`b.py", line=3)
    md = diagnosis_markdown({"findings": [finding], "walk": {"path": ["start", HOSTILE], "answers": {"q": HOSTILE}}})
    _assert_inert_html(_viewer(md))


def test_helpers() -> None:
    assert visible("a\x1b[2Jb\x07\tc\n") == "a␛[2Jb␇\tc\n"
    assert visible_keeping_colour("\x1b[31mred\x1b[0m \x1b]0;t\x07") == "\x1b[31mred\x1b[0m ␛]0;t␇"
    assert md_code("a ``` b") == "````a ``` b````" and md_code("`x`") == "`` `x` ``"
    assert md_block("x\n````\ny", "sh") == "`````sh\nx\n````\ny\n`````"
    assert md_text("# h [a](javascript:x) <i> 1. x") == "\\# h \\[a\\](javascript:x) &lt;i&gt; 1. x"
    assert md_text("1. item") == "1\\. item" and md_text("14.1 ms") == "14.1 ms"


def test_a_saved_logs_report_loads_again(tmp_path: Path) -> None:
    """Non-finite numbers in the document (a root cause ordered at -inf) are written as null, never -Infinity."""
    log = tmp_path / "u.log"
    log.write_text("[rank1]: Traceback (most recent call last):\n"
                   '[rank1]:   File "train.py", line 3, in <module>\n'
                   "[rank1]: ValueError: bad record\n"
                   "E0101 12:00:00.000000 1 torch/distributed/elastic/multiprocessing/api.py:732] failed "
                   "(exitcode: 1) local_rank: 1 (pid: 7) of binary: /usr/bin/python3\n")
    saved = tmp_path / "u.json"
    assert main(["logs", str(log), "--format", "json", "-o", str(saved)]) == 1
    assert "Infinity" not in saved.read_text() and "NaN" not in saved.read_text()
    assert main(["report", str(saved), "--format", "md", "-o", str(tmp_path / "u.md")]) == 1
    assert json.loads(render({"findings": [], "facts": {"x": float("nan"), "y": [float("-inf"), 1.5]}}, "json"))[
        "facts"] == {"x": None, "y": [None, 1.5]}
