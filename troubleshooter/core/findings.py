"""Findings: what the engine concludes, with the evidence and a rendered fix."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


@dataclass
class Evidence:
    """One observation behind a finding: which source, which rank, what was seen (and where)."""

    source: str
    detail: str
    rank: int | None = None
    path: str | None = None
    line: int | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    vars: dict[str, Any] = field(default_factory=dict)
    order: float | None = None  # position in time (log line number, timestamp) for root-cause ordering
    severity: str | None = None  # the source's own severity for this evidence (a log signature's)
    root: bool = False  # the source judged this the first failure (the log analyzer's root cause)
    echo: bool = False  # a downstream echo of some other failure (a watchdog timeout, "peer closed")

    def to_dict(self) -> dict[str, Any]:
        """JSON form; empty optional fields are dropped."""
        data = {"source": self.source, "rank": self.rank, "detail": self.detail}
        for key in ("path", "line", "severity"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.facts:
            data["facts"] = self.facts
        if self.vars:
            data["vars"] = self.vars
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Evidence":
        """Inverse of :meth:`to_dict`."""
        return cls(source=data.get("source", ""), detail=data.get("detail", ""), rank=data.get("rank"),
                   path=data.get("path"), line=data.get("line"), facts=dict(data.get("facts") or {}),
                   vars=dict(data.get("vars") or {}), severity=data.get("severity"))


@dataclass
class Finding:
    """A diagnosis: id (a public contract), severity, title, evidence, and the fix."""

    id: str
    severity: str
    title: str
    category: str = ""
    why: str = ""
    fix: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    explained_by: list[str] = field(default_factory=list)
    gate_unmet: str | None = None
    checks: list[str] = field(default_factory=list)

    @property
    def location(self) -> dict[str, Any] | None:
        """The first file:line among the evidence."""
        for ev in self.evidence:
            if ev.path:
                return {"path": ev.path, "line": ev.line}
        return None

    @property
    def ranks(self) -> list[int]:
        """Ranks the evidence came from; echoes (a rank that only saw another's failure) only when nothing else names one."""
        ranked = [ev for ev in self.evidence if ev.rank is not None]
        return sorted({ev.rank for ev in [ev for ev in ranked if not ev.echo] or ranked})

    def to_dict(self) -> dict[str, Any]:
        """JSON form per the report schema."""
        return {
            "id": self.id, "severity": self.severity, "title": self.title, "category": self.category,
            "why": self.why, "evidence": [e.to_dict() for e in self.evidence], "location": self.location,
            "fix": self.fix, "commands": self.commands, "references": self.references,
            "explained_by": self.explained_by, "gate_unmet": self.gate_unmet, "ranks": self.ranks,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Finding":
        """Inverse of :meth:`to_dict`."""
        return cls(
            id=data["id"], severity=data.get("severity", "info"), title=data.get("title", data["id"]),
            category=data.get("category", ""), why=data.get("why", ""), fix=data.get("fix", ""),
            evidence=[Evidence.from_dict(e) for e in data.get("evidence") or []],
            commands=list(data.get("commands") or []), references=list(data.get("references") or []),
            explained_by=list(data.get("explained_by") or []), gate_unmet=data.get("gate_unmet"),
        )
