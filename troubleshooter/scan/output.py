"""Render a scan's report document as linter-like text or SARIF 2.1.0."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import quote

from troubleshooter import __version__

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
INFO_URI = "https://github.com/ddp-troubleshooter/ddp-troubleshooter"


def _rows(doc: Mapping[str, Any]) -> list[tuple[str, int, str, str, str]]:
    """(path, line, id, severity, detail) per located evidence item, plus path-less findings under ''."""
    rows = []
    for finding in doc.get("findings", []):
        located = False
        for ev in finding.get("evidence", []):
            if ev.get("path"):
                located = True
                severity = ev.get("severity") or finding["severity"]  # a hit may be weaker than its finding
                rows.append((ev["path"], ev.get("line") or 1, finding["id"], severity, ev.get("detail", "")))
        if not located:
            details = "; ".join(ev.get("detail", "") for ev in finding.get("evidence", []))
            rows.append(("", 0, finding["id"], finding["severity"], f"{finding.get('title', '')}: {details}".strip(": ")))
    return sorted(rows, key=lambda r: (r[0] == "", r[0], r[1], r[2]))


def render_text(doc: Mapping[str, Any], unreadable: list[str]) -> str:
    """``path:line: severity id: detail`` lines grouped by file, then a summary line."""
    facts = doc.get("facts", {})
    out, current = [], None
    syntax = [(e["path"], e["line"], "syntax-error", "error", e["detail"]) for e in facts.get("scan.syntax_errors", [])]
    rows = sorted(_rows(doc) + syntax, key=lambda r: (r[0] == "", r[0], r[1], r[2]))
    for path, line, ident, severity, detail in rows:
        if path != current:
            if current is not None:
                out.append("")
            out.append(path or "(whole scan)")
            current = path
        where = f"{path}:{line}" if path else "-"
        out.append(f"  {where}: {severity} {ident}: {detail}")
    for problem in unreadable:
        out.append(f"error: {problem}")
    counts = doc.get("summary", {})
    n = sum(counts.values())
    files = facts.get("scan.files", 0)
    tail = f"; {len(syntax)} file(s) could not be parsed" if syntax else ""
    if n:
        out.append(f"\nFound {n} issue(s) ({counts.get('error', 0)} error, {counts.get('warning', 0)} warning, "
                   f"{counts.get('info', 0)} info) in {files} file(s){tail}.")
    else:
        out.append(("\n" if rows else "") + f"No issues found in {files} file(s){tail}.")
    return "\n".join(out) + "\n"


def _uri(path: str) -> dict[str, str]:
    p = Path(path)
    if p.is_absolute():
        try:
            return {"uri": quote(p.resolve().relative_to(Path.cwd().resolve()).as_posix()), "uriBaseId": "%SRCROOT%"}
        except ValueError:
            return {"uri": p.resolve().as_uri()}
    return {"uri": quote(Path(os.path.normpath(path)).as_posix()), "uriBaseId": "%SRCROOT%"}


def render_sarif(doc: Mapping[str, Any], catalog: Mapping[str, Mapping[str, Any]]) -> str:
    """A SARIF 2.1.0 log with one run: rules for every reported id, one result per located hit."""
    rows = [r for r in _rows(doc) if r[0]]
    ids = sorted({r[2] for r in rows})
    by_id = {f["id"]: f for f in doc.get("findings", [])}
    rules = []
    for ident in ids:
        entry = catalog.get(ident, {})
        finding = by_id.get(ident, {})
        rule = {
            "id": ident, "name": "".join(part.capitalize() for part in ident.split("-")),
            "shortDescription": {"text": str(finding.get("title") or entry.get("title") or ident)},
            "fullDescription": {"text": str(finding.get("why") or entry.get("why") or ident)},
            "help": {"text": str(finding.get("fix") or ""), "markdown": str(finding.get("fix") or "")},
            "defaultConfiguration": {"level": SARIF_LEVEL.get(finding.get("severity", "warning"), "warning")},
            "properties": {"category": finding.get("category", ""), "tags": ["ddp", finding.get("category", "")]},
        }
        refs = entry.get("references") or finding.get("references") or []
        if refs:
            rule["helpUri"] = str(refs[0])
        rules.append(rule)
    index = {ident: i for i, ident in enumerate(ids)}
    results = [{
        "ruleId": ident, "ruleIndex": index[ident], "level": SARIF_LEVEL.get(severity, "warning"),
        "message": {"text": detail},
        "locations": [{"physicalLocation": {"artifactLocation": _uri(path), "region": {"startLine": max(1, line)}}}],
    } for path, line, ident, severity, detail in rows]
    notes = [{"level": "error", "message": {"text": e["detail"]},
              "locations": [{"physicalLocation": {"artifactLocation": _uri(e["path"]),
                                                  "region": {"startLine": max(1, e["line"])}}}]}
             for e in doc.get("facts", {}).get("scan.syntax_errors", [])]
    log = {
        "$schema": SARIF_SCHEMA, "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "ddp-troubleshooter", "version": __version__, "semanticVersion": __version__,
                                "informationUri": INFO_URI, "rules": rules}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().resolve().as_uri() + "/"}},
            "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notes}],
            "results": results,
        }],
    }
    return json.dumps(log, indent=2) + "\n"
