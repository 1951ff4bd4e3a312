"""Markdown for the diagnosis screen: findings root cause first, each with evidence, fix and commands."""

from __future__ import annotations

from typing import Any, Mapping

from troubleshooter.report.inert import md_block, md_code, md_prose, md_text
from troubleshooter.report.render import ICONS


def finding_markdown(finding: Mapping[str, Any], index: int) -> str:
    """One finding of a report document as Markdown (why and fix are Markdown from the rules; user text is escaped)."""
    lines = [f"## {index}. {ICONS.get(finding['severity'], '•')} {md_text(finding['title'])}",
             f"{md_code(finding['id'])} · {md_text(finding['severity'])} · {md_text(finding.get('category', ''))}", ""]
    if finding.get("explained_by"):
        lines += [f"*Likely a consequence of: {', '.join(map(md_text, finding['explained_by']))}*", ""]
    if finding.get("why"):
        lines += [f"**Why it matters.** {md_prose(finding['why'])}", ""]
    if finding.get("evidence"):
        lines.append("**Evidence**")
        for ev in finding["evidence"]:
            rank = f"rank {md_text(ev['rank'])}: " if ev.get("rank") is not None else ""
            where = md_code(f"{ev['path']}:{ev.get('line')}") + " " if ev.get("path") else ""
            lines.append(f"- {rank}{where}{md_text(ev.get('detail', ''))} *({md_text(ev.get('source', ''))})*")
        lines.append("")
    if finding.get("gate_unmet"):
        lines += [f"> **Not yet.** {md_text(finding['gate_unmet'])} Press **v** to run the measurement.", ""]
    else:
        lines += ["**Fix**", "", md_prose(finding.get("fix", "")), ""]
    if finding.get("commands"):
        lines += [md_block("\n".join(finding["commands"]), "sh"), ""]
    return "\n".join(lines)


def diagnosis_markdown(doc: Mapping[str, Any]) -> str:
    """The whole diagnosis view of a report document."""
    findings = doc.get("findings") or []
    parts = []
    if not findings and (doc.get("probes") or (doc.get("walk") or {}).get("answers")):
        parts.append(f"No finding of any severity from the evidence gathered ({len(doc.get('probes') or [])} probe "
                     "result(s)). Walk a symptom to narrow it down, or analyse a log of the failed run.")
    elif not findings:
        parts.append("No finding yet. Walk a symptom, run all checks, or analyse a log to gather evidence.")
    for i, finding in enumerate(findings, 1):
        parts.append(finding_markdown(finding, i))
    walk = doc.get("walk") or {}
    if walk.get("path"):
        parts.append("## Path walked\n\n" + " → ".join(map(md_text, walk["path"])) + "\n")
        parts += [f"- {md_text(node)}: **{md_text(answer)}**" for node, answer in (walk.get("answers") or {}).items()]
    return "\n\n".join(parts)
