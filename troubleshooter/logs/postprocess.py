"""What the engine cannot know about log findings: per-signature severity and root-cause order.

``finalize(findings, facts)`` is applied after ``engine.evaluate`` by every caller that
analysed logs (``troubleshoot logs``, ``--auto --log``).
"""

from __future__ import annotations

from typing import Any

from troubleshooter.findings import SEVERITY_RANK


def apply_hit_severity(findings: list, facts: dict[str, Any]) -> None:
    """A finding raised only by log hits whose signatures override the severity takes that severity.

    The destroy_process_group warning, for example, is ``info`` in a log even where the
    catalog entry (judged from code) is more severe.
    """
    for finding in findings:
        hits = facts.get(f"log.{finding.id}")
        if not hits or any(c != "log-hits" for c in finding.checks):
            continue
        overrides = [h.get("severity") for h in hits]
        if overrides and all(overrides):
            finding.severity = min(overrides, key=SEVERITY_RANK.get)


def order_by_root_cause(findings: list, facts: dict[str, Any]) -> list:
    """The root-cause finding first, then findings with non-echo evidence, then pure echoes (stable)."""
    root = (facts.get("log.root_cause") or {}).get("id")

    def echo_only(finding) -> bool:
        hits = facts.get(f"log.{finding.id}") or []
        return bool(hits) and all(h.get("echo") for h in hits)

    return sorted(findings, key=lambda f: (f.id != root, echo_only(f)))


def finalize(findings: list, facts: dict[str, Any]) -> list:
    """Apply signature severities, then put the log's root cause first."""
    apply_hit_severity(findings, facts)
    return order_by_root_cause(findings, facts)
