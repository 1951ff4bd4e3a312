"""``troubleshoot logs PATH... [--format text|json|md|html] [-o PATH] [--rules DIR]``.

``-`` reads standard input; ``.gz`` files are decompressed on the fly; logs are streamed,
so memory stays flat on multi-gigabyte inputs. Exit codes: 0 no finding of severity
warning or worse, 1 such findings, 2 an unreadable log or invalid rules.
"""

from __future__ import annotations

import sys
from typing import Any

from troubleshooter.core.errors import UsageError


def render_text(doc: dict[str, Any], facts: dict[str, Any], color: bool) -> str:
    """A short log summary (root cause, failed ranks, NCCL setup) above the doctor-style findings."""
    from troubleshooter.report.inert import visible
    from troubleshooter.report.render import render_terminal

    lines = [f"Analysed {facts.get('log.lines', 0)} lines from {len(facts.get('log.files') or [])} file(s)."]
    root = facts.get("log.root_cause")
    if root:
        where = f"{root.get('path')}:{root.get('line')}" if root.get("line") else ""
        rank = (f"rank {root['rank']}" if root.get("rank") is not None else
                f"local rank {root['local_rank']}" if root.get("local_rank") is not None else "an unknown rank")
        if root.get("id"):
            what = root["id"]
        elif root.get("exit_code") is not None:
            what = f"exit code {root['exit_code']}" + (f" ({root['signal']})" if root.get("signal") else "")
        else:
            what = "no known diagnosis"
        at = f" (raised at {root['where']})" if root.get("where") else ""
        lines.append(f"Root cause (first failure): {what} on {rank} {where}".rstrip() + at)
        if root.get("traceback"):
            lines.append(f"    {root['traceback']}")
    if facts.get("log.failed_ranks"):
        codes = facts.get("log.exit_codes") or {}
        ranks = ", ".join(f"{r}" + (f" (exit {codes[str(r)]})" if str(r) in codes else "") for r in facts["log.failed_ranks"])
        lines.append(f"Failed ranks: {ranks}")
    nccl = [f"{label} {', '.join(v) if isinstance(v, list) else v}" for label, v in (
        ("NCCL", facts.get("log.nccl_version")), ("transports", facts.get("log.nccl_transports")),
        ("interfaces", facts.get("log.nccl_interfaces"))) if v]
    if nccl:
        lines.append("; ".join(nccl))
    if facts.get("log.suppressed"):
        echoes = sorted({f"{s['id']} (rank {s['rank']})" if s.get("rank") is not None else s["id"]
                         for s in facts["log.suppressed"]})
        lines.append(f"Downstream echoes not reported separately: {', '.join(echoes)}")
    return visible("\n".join(lines)) + "\n\n" + render_terminal(doc, color=color)


def command(args) -> int:
    """Analyse the logs, evaluate the hits with the rules engine, write the chosen format; return the exit code."""
    from troubleshooter.logs.analyzer import analyze_paths
    from troubleshooter.report.document import choose_format, emit, exit_code, write_output
    from troubleshooter.core.ruleset import load_rules
    from troubleshooter.run.session import Session

    rules = load_rules(list(getattr(args, "rules", None) or []))
    paths = list(args.paths)
    if paths.count("-") > 1:
        raise UsageError("standard input (-) can be given only once")
    try:
        result = analyze_paths(paths, rules)
    except OSError as exc:
        raise UsageError(f"cannot read log {exc}") from None
    session = Session(rules, "logs")
    session.add_facts(result.facts, "logs")
    doc = session.report()
    fmt = choose_format(args.format, args.output, "text")
    if fmt in ("json", "md", "html"):
        emit(doc, fmt, args.output)
    else:
        color = not args.output and sys.stdout.isatty()
        write_output(render_text(doc, result.facts, color), args.output)
    return exit_code(doc)
