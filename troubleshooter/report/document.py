"""Build the JSON report document (schema ``ddp-troubleshooter/report@1``) and write it in any format."""

from __future__ import annotations

import datetime as _dt
import json
import socket
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

from troubleshooter import __version__
from troubleshooter.core.engine import Observations
from troubleshooter.core.errors import UsageError
from troubleshooter.core.findings import SEVERITY_RANK, Finding
from troubleshooter.core.probe import ProbeResult
from troubleshooter.report.output import write_output
from troubleshooter.report.redact import redact

SCHEMA = "ddp-troubleshooter/report@1"
FORMAT_BY_SUFFIX = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json",
                    ".sarif": "sarif", ".txt": "text"}


def grade_probe(result: ProbeResult, findings: Iterable[Finding]) -> str:
    """pass / warn / fail for a probe that ran, from the worst finding its facts raised on its rank."""
    if result.status != "ok":
        return result.status
    worst = None
    for finding in findings:
        for ev in finding.evidence:
            sources = {s.strip() for s in ev.source.split(",")}
            if result.probe in sources and (ev.rank is None or ev.rank == result.rank):
                if worst is None or SEVERITY_RANK[finding.severity] < SEVERITY_RANK[worst]:
                    worst = finding.severity
    return {"error": "fail", "warning": "warn"}.get(worst or "", "pass")


def build_report(mode: str, findings: list[Finding], results: list[ProbeResult] = (), obs: Observations | None = None,
                 world: Mapping[str, Any] | None = None, symptom: str | None = None,
                 extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report document; secrets are redacted on the way out."""
    obs = obs or Observations()
    ranks = []
    for rank in sorted(obs.ranks):
        rank_results = [r for r in results if r.rank == rank]
        ranks.append({"rank": rank, "host": next((r.host for r in rank_results if r.host), ""),
                      "facts": obs.ranks[rank].as_dict(),
                      "probes": [{"name": r.probe, "status": grade_probe(r, findings), "duration_s": round(r.duration_s, 4)}
                                 for r in rank_results]})
    doc = {
        "schema": SCHEMA, "tool_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "mode": mode, "symptom": symptom, "host": socket.gethostname(),
        "command": " ".join(["troubleshoot", *sys.argv[1:]]) if sys.argv and sys.argv[0].endswith("troubleshoot") else None,
        "world": dict(world or {}),
        "findings": [f.to_dict() for f in findings],
        "probes": [{**r.to_dict(), "status": grade_probe(r, findings)} for r in results],
        "facts": obs.facts.as_dict(),
        "ranks": ranks,
        "summary": summarize(findings),
    }
    if extra:
        doc.update(extra)
    return redact(doc)


def summarize(findings: Iterable[Finding]) -> dict[str, int]:
    """Counts per severity."""
    counts = {"error": 0, "warning": 0, "info": 0}
    for finding in findings:
        counts[finding.severity] = counts.get(finding.severity, 0) + 1
    return counts


def exit_code(doc: Mapping[str, Any]) -> int:
    """0 when no finding of severity warning or worse, else 1."""
    return 1 if any(f["severity"] in ("error", "warning") for f in doc.get("findings", [])) else 0


def load_report(path: str) -> dict[str, Any]:
    """Read a saved report and validate it against ``report.schema.json``; a UsageError names the file and field."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # NaN/Infinity, nesting too deep for the parser
        raise UsageError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise UsageError(f"{path}:1: expected a report with \"schema\": \"{SCHEMA}\"")
    problems = schema_problems(doc)
    if problems:
        more = f"\n  … and {len(problems) - 5} more" if len(problems) > 5 else ""
        raise UsageError(f"{path}: not a valid {SCHEMA} report:\n" + "\n".join(f"  {p}" for p in problems[:5]) + more)
    return doc


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def schema_problems(doc: Any) -> list[str]:
    """Every violation of the published schema (``troubleshooter/report/report.schema.json``), as ``field: message``."""
    import jsonschema

    schema = json.loads((Path(__file__).with_name("report.schema.json")).read_text(encoding="utf-8"))
    try:
        errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(map(str, e.path)))
    except RecursionError:
        return ["(document): nested too deeply"]
    return [f"{_field(error.absolute_path)}: {error.message[:200]}" for error in errors]


def _field(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out or "(document)"


def choose_format(fmt: str | None, output: str | None, default: str) -> str:
    """Explicit --format wins, then the output file's extension, then the default."""
    if fmt:
        return fmt
    if output and output != "-":
        return FORMAT_BY_SUFFIX.get(Path(output).suffix.lower(), default)
    return default


def emit(doc: Mapping[str, Any], fmt: str | None, output: str | None, default: str = "md") -> str:
    """Render ``doc`` in the chosen format and write it; returns the format used."""
    from troubleshooter.report.render import render

    chosen = choose_format(fmt, output, default)
    write_output(render(doc, chosen), output)
    return chosen
