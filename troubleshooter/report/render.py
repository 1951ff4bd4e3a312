"""Render a report document: Markdown and HTML through Jinja templates, JSON, and doctor-style text.

Templates only format a view model (frozen dataclasses built here); they hold no logic
beyond loops and conditionals. HTML is autoescaped; fix text (Markdown from the rules) is
converted with markdown-it (raw HTML disabled) and code blocks highlighted with inline styles,
so the page is one self-contained file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from troubleshooter.core.paths import templates_dir
from troubleshooter.report.measurements import Measurements, measurements
from troubleshooter.core.values import readable
from troubleshooter.report.inert import inert, md_block, md_code, md_prose, md_text
from troubleshooter.report.redact import redact

TABLE_TITLES = {"rank_table": "Per rank", "nodes": "Per node"}
ICONS = {"error": "✗", "warning": "!", "info": "•"}
STATUS_ICONS = {"pass": "✓", "warn": "!", "fail": "✗", "error": "☠", "skipped": "-", "timeout": "⧗", "ok": "✓"}


@dataclass(frozen=True)
class EvidenceItem:
    """One evidence line of a finding."""

    source: str
    rank: Any
    detail: str
    where: str


@dataclass(frozen=True)
class FindingItem:
    """A finding as the templates show it."""

    id: str
    severity: str
    icon: str
    title: str
    category: str
    why: str
    fix: str
    fix_html: Markup
    commands: tuple[str, ...]
    references: tuple[str, ...]
    evidence: tuple[EvidenceItem, ...]
    location: str
    explained_by: tuple[str, ...]
    gate_unmet: str | None
    ranks: tuple[int, ...]


@dataclass(frozen=True)
class ProbeRow:
    """One probe run (per rank)."""

    name: str
    status: str
    icon: str
    rank: Any
    duration_ms: int
    message: str


@dataclass(frozen=True)
class ProbeLine:
    """Runs of one probe with the same outcome on several ranks, as one line."""

    name: str
    ranks: str
    status: str
    icon: str
    duration_ms: int
    message: str


@dataclass(frozen=True)
class ReportPage:
    """Everything a report template needs."""

    title: str
    created: str
    tool_version: str
    mode: str
    symptom: str | None
    world: tuple[tuple[str, str], ...]
    summary: Mapping[str, int]
    verdict: str
    findings: tuple[FindingItem, ...]
    probes: tuple[ProbeRow, ...]
    facts: tuple[tuple[str, str], ...]
    ranks: tuple[Mapping[str, Any], ...]
    walk: tuple[str, ...] = ()
    answers: tuple[tuple[str, str], ...] = ()
    stack_groups: tuple[Mapping[str, Any], ...] = ()
    run_info: tuple[tuple[str, str], ...] = ()
    root_failure: Mapping[str, Any] | None = None
    tables: tuple[tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]], ...] = ()
    interrupted: bool = False
    incomplete: tuple[str, ...] = ()  # probe runs that crashed or timed out: the verdict does not cover them
    probe_lines: tuple[ProbeLine, ...] = ()
    measured: Measurements = Measurements((), (), (), ())


def _markdown(text: str) -> Markup:
    from markdown_it import MarkdownIt
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.util import ClassNotFound

    def code(source: str, lang: str, _attrs: str) -> str:
        try:
            lexer = get_lexer_by_name(lang) if lang else TextLexer()
        except ClassNotFound:
            lexer = TextLexer()
        return highlight(source, lexer, HtmlFormatter(nowrap=True, noclasses=True, style="friendly"))

    md = MarkdownIt("commonmark", {"html": False, "highlight": code})
    return Markup(md.render(text or ""))  # noqa: S704 - markdown-it escapes; raw HTML is disabled


def _tables(details: Mapping[str, Any]) -> tuple:
    """Details entries shaped as a list of flat dicts become tables."""
    out = []
    for name, value in (details or {}).items():
        if isinstance(value, list) and value and all(isinstance(row, dict) for row in value):
            columns = tuple(dict.fromkeys(k for row in value for k in row))
            rows = tuple(tuple(readable(c, row.get(c, "")) for c in columns) for row in value[:200])
            out.append((name, columns, rows))
    return tuple(out)


def _probe_lines(probes: Iterable[ProbeRow]) -> tuple[ProbeLine, ...]:
    lines = []
    for group in _probe_groups(probes):
        p = group[0]
        ranks = [g.rank for g in group if g.rank is not None]
        lines.append(ProbeLine(p.name, _span(ranks) if ranks else "–", p.status, p.icon,
                               max(g.duration_ms for g in group),
                               f"rank {p.rank}: {p.message}" if len(ranks) > 1 and p.message else p.message))
    return tuple(lines)


def view_model(doc: Mapping[str, Any]) -> ReportPage:
    """Build the view model from a report document (fresh or reloaded; secrets redacted)."""
    doc = inert(redact(doc))
    findings = []
    for f in doc.get("findings", []):
        evidence = tuple(EvidenceItem(e.get("source", ""), e.get("rank"), e.get("detail", ""),
                                      f"{e['path']}:{e.get('line') or ''}".rstrip(":") if e.get("path") else "")
                         for e in f.get("evidence", []))
        loc = f.get("location") or {}
        findings.append(FindingItem(
            id=f["id"], severity=f.get("severity", "info"), icon=ICONS.get(f.get("severity"), "•"),
            title=f.get("title", f["id"]), category=f.get("category", ""), why=f.get("why", ""), fix=f.get("fix", ""),
            fix_html=_markdown(md_prose(f.get("fix", ""))), commands=tuple(f.get("commands") or ()),
            references=tuple(f.get("references") or ()), evidence=evidence,
            location=f"{loc['path']}:{loc.get('line') or ''}".rstrip(":") if loc.get("path") else "",
            explained_by=tuple(f.get("explained_by") or ()), gate_unmet=f.get("gate_unmet"),
            ranks=tuple(f.get("ranks") or ())))
    probes = tuple(ProbeRow(p["name"], p.get("status", ""), STATUS_ICONS.get(p.get("status"), "?"), p.get("rank"),
                            int(round(float(p.get("duration_s") or 0) * 1000)), p.get("message", ""))
                   for p in doc.get("probes", []))
    summary = doc.get("summary") or {}
    verdict = ("No issues found." if not findings else
               f"Found {len(findings)} issue(s): {summary.get('error', 0)} error, {summary.get('warning', 0)} warning, "
               f"{summary.get('info', 0)} info.")
    world = tuple((k, readable(k, v)) for k, v in (doc.get("world") or {}).items())
    walk = doc.get("walk") or {}
    run = doc.get("run") or {}
    return ReportPage(
        title=f"DDP diagnosis ({doc.get('mode', 'auto')})", created=doc.get("created", ""),
        tool_version=doc.get("tool_version", ""), mode=doc.get("mode", ""), symptom=doc.get("symptom"),
        world=world, summary=summary, verdict=verdict, findings=tuple(findings), probes=probes,
        facts=tuple(sorted((k, readable(k, v)) for k, v in (doc.get("facts") or {}).items())),
        ranks=tuple(doc.get("ranks") or ()), walk=tuple(walk.get("path") or ()),
        answers=tuple((k, str(v)) for k, v in (walk.get("answers") or {}).items()),
        stack_groups=tuple((doc.get("stacks") or {}).get("groups") or ()),
        run_info=tuple((k, readable(k, v)) for k, v in run.items() if k != "root_failure" and v not in (None, "")),
        root_failure=run.get("root_failure"),
        tables=_tables({TABLE_TITLES[k]: doc[k] for k in TABLE_TITLES if doc.get(k)}),
        interrupted=bool(doc.get("interrupted")),
        incomplete=tuple(f"{p.name}{'' if p.rank is None else f' (rank {p.rank})'} {p.status}: {p.message}".strip()
                         for p in probes if p.status in ("error", "timeout")),
        probe_lines=_probe_lines(probes), measured=measurements(doc))


def environment(extra_dirs: Iterable[Path] = ()) -> Environment:
    """Jinja environment: user template dirs first, then the shipped ones; HTML autoescaped."""
    loader = FileSystemLoader([*map(str, extra_dirs), str(templates_dir())])
    env = Environment(loader=loader, autoescape=select_autoescape(enabled_extensions=("html", "html.jinja2"),
                                                                  default_for_string=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(cell=md_text, md=md_text, code=md_code, fence=md_block, prose=md_prose)
    return env


def render(doc: Mapping[str, Any], fmt: str) -> str:
    """Render the report document as md, html, json or text (secrets redacted first)."""
    if fmt == "json":
        return json.dumps(_finite(redact(doc)), indent=2, default=str, allow_nan=False) + "\n"
    if fmt == "text":
        return render_terminal(doc, color=False)
    template = {"md": "report.md.jinja2", "html": "report.html.jinja2"}[fmt]
    return _shipped_environment().get_template(template).render(page=view_model(doc))


def _finite(obj: Any) -> Any:
    """``obj`` with NaN and infinities as null: JSON has no such numbers, and a saved report must load again."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


@lru_cache(maxsize=1)
def _shipped_environment() -> Environment:
    """One environment per process, so each template compiles once (Jinja re-reads a template that changed)."""
    return environment()


def _probe_groups(probes: Iterable[ProbeRow]) -> list[list[ProbeRow]]:
    """Per-rank runs of one probe with the same status share a line (the first rank's message speaks for them)."""
    groups: dict[tuple, list[ProbeRow]] = {}
    for p in probes:
        key = (p.name, p.status) if p.rank is not None and p.status in ("pass", "skipped") else (id(p),)
        groups.setdefault(key, []).append(p)
    return list(groups.values())


def _span(ranks: list[int]) -> str:
    """0-3,5 style list of ranks."""
    ranks, out, start = sorted(ranks), [], None
    for i, r in enumerate(ranks):
        start = r if start is None else start
        if i + 1 == len(ranks) or ranks[i + 1] != r + 1:
            out.append(str(start) if start == r else f"{start}-{r}")
            start = None
    return ",".join(out)


def _c(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def render_terminal(doc: Mapping[str, Any], color: bool = True, quiet: bool = False) -> str:
    """Doctor-style text: one line per probe, then findings with evidence and fix, then a summary line."""
    page = view_model(doc)
    colors = {"pass": "32", "ok": "32", "warn": "33", "fail": "31", "error": "31", "timeout": "31", "skipped": "2",
              "warning": "33", "info": "36"}
    lines: list[str] = []
    if not quiet:
        for group in _probe_groups(page.probes):
            p = group[0]
            ranks = [g.rank for g in group if g.rank is not None]
            rank = (f" rank {ranks[0]}" if len(ranks) == 1 else f" ranks {_span(ranks)}") if ranks else ""
            head = _c(f"[{p.icon}]", colors.get(p.status, "0"), color)
            msg = f" ({'rank %s: ' % p.rank if len(ranks) > 1 else ''}{p.message})" if p.message else ""
            lines.append(f"{head} {p.name}{rank}{msg} [{max(g.duration_ms for g in group)}ms]")
        if page.probes:
            lines.append("")
        for f in page.findings:
            lines.append(_c(f"{f.icon} {f.id}", colors.get(f.severity, "0"), color) + f": {f.title}")
            if f.location:
                lines.append(f"    at {f.location}")
            for ev in f.evidence[:6]:
                rank = f"rank {ev.rank}: " if ev.rank is not None else ""
                where = f"{ev.where}: " if ev.where and ev.where != f.location else ""
                lines.append(f"    • {rank}{where}{ev.detail}")
            if len(f.evidence) > 6:
                lines.append(f"    • … {len(f.evidence) - 6} more")
            if f.explained_by:
                lines.append(f"    (likely a consequence of: {', '.join(f.explained_by)})")
            for fix_line in f.fix.splitlines()[:12]:
                lines.append(f"    {fix_line}" if fix_line.strip() else "")
            if f.commands:
                lines.append("    You can check or solve this by running:")
                lines += [f"      $ {cmd}" for cmd in f.commands]
            lines.append("")
    for line in page.incomplete:
        lines.append(_c(f"☠ did not complete: {line}", "31", color))
    n_cat = len({f.category for f in page.findings if f.severity != "info"})
    if any(f.severity != "info" for f in page.findings):
        lines.append(_c(f"! Found issues in {n_cat} categor{'y' if n_cat == 1 else 'ies'}. ", "33", color) + page.verdict)
    elif page.incomplete:
        lines.append(_c(f"! No issues found by the checks that completed; {len(page.incomplete)} did not.", "33", color))
    else:
        lines.append(_c("• No issues found!", "32", color) + ("" if not page.findings else f" ({page.verdict})"))
    return "\n".join(lines) + "\n"
