"""Log-analyzer quality on the real corpus ``tests/real/logs`` (issue 11), shared by the bench and the tests.

Each ``<name>.log`` (verbatim machine output from a public report) has ``<name>.expect.yaml``:
``source`` (URL, which fixes the dev/test split), ``root_cause`` (``null`` for a healthy run), ``ids``,
``healthy`` and optionally ``acceptable`` (ids a maintainer would also accept as the first finding).

A log is judged as a user sees it: the ``troubleshoot logs`` report (analyzer facts, then the rules).

- *root cause first*: the report's first finding of severity warning or error is ``root_cause``;
- *clean*: no finding of severity warning or error (exit code 0), required of every healthy log and
  never acceptable for a failing one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import yaml

from tests.real.split import split_of

from troubleshooter.logs.analyzer import analyze_paths
from troubleshooter.report.document import exit_code
from troubleshooter.run.session import Session

REAL_LOGS = Path(__file__).resolve().parent / "logs"
SHOWN = ("error", "warning")


@dataclass(frozen=True)
class LogCase:
    """One corpus log and what its public report confirmed."""

    name: str
    log: Path
    expect: dict[str, Any]

    @property
    def split(self) -> str:
        return split_of(self.expect["source"])

    @property
    def healthy(self) -> bool:
        return bool(self.expect.get("healthy"))

    @property
    def accepted(self) -> set[str]:
        """The root cause and the alternatives the label accepts as the first finding."""
        return {self.expect["root_cause"], *(self.expect.get("acceptable") or [])} - {None}


@dataclass
class Verdict:
    """What the report said about one log."""

    case: LogCase
    shown: list[str]       # finding ids of severity warning/error, in report order

    @property
    def first(self) -> str | None:
        return self.shown[0] if self.shown else None

    @property
    def clean(self) -> bool:
        return not self.shown

    @property
    def root_first(self) -> bool:
        return not self.case.healthy and self.first == self.case.expect["root_cause"]


def cases(split: str | None = None, corpus: Path = REAL_LOGS) -> list[LogCase]:
    """Every labelled log in ``corpus`` (``split`` = ``dev``/``test`` keeps one side), by name."""
    out = []
    for expect in sorted(corpus.glob("*.expect.yaml")):
        name = expect.name[: -len(".expect.yaml")]
        log = next((p for p in (corpus / f"{name}.log", corpus / f"{name}.log.gz") if p.exists()), None)
        if log is None:
            continue
        case = LogCase(name, log, yaml.safe_load(expect.read_text(encoding="utf-8")))
        if split is None or case.split == split:
            out.append(case)
    return out


def judge(case: LogCase, rules: Any) -> Verdict:
    """Analyse the log as ``troubleshoot logs`` does and keep the findings a user is shown."""
    session = Session(rules, "logs")
    session.add_facts(analyze_paths([case.log], rules).facts, "logs")
    doc = session.report()
    shown = [f["id"] for f in doc["findings"] if f["severity"] in SHOWN]
    assert bool(shown) == bool(exit_code(doc))
    return Verdict(case, shown)


@dataclass
class Score:
    """Aggregate figures over a set of verdicts, and the per-root-cause table."""

    verdicts: list[Verdict]
    per_id: dict[str, Counter] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for v in self.failing:
            row = self.per_id.setdefault(v.case.expect["root_cause"], Counter())
            row["logs"] += 1
            row["first"] += v.root_first
            row["accepted"] += v.first in v.case.accepted
            row["found"] += v.case.expect["root_cause"] in v.shown
            row["clean"] += v.clean

    @property
    def failing(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.case.healthy]

    @property
    def healthy(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.case.healthy]

    @property
    def root_first(self) -> int:
        return sum(v.root_first for v in self.failing)

    @property
    def accepted_first(self) -> int:
        return sum(v.first in v.case.accepted for v in self.failing)

    @property
    def healthy_clean(self) -> int:
        return sum(v.clean for v in self.healthy)

    @property
    def failing_clean(self) -> int:
        return sum(v.clean for v in self.failing)

    def summary(self) -> str:
        failing, healthy = len(self.failing), len(self.healthy)
        return (f"root cause first {self.root_first}/{failing} ({pct(self.root_first, failing)}), "
                f"incl. acceptable {self.accepted_first}/{failing} ({pct(self.accepted_first, failing)}); "
                f"healthy clean {self.healthy_clean}/{healthy} ({pct(self.healthy_clean, healthy)}); "
                f"failing reported clean {self.failing_clean}")


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def score(case_list: Iterable[LogCase], rules: Any) -> Score:
    """Judge every case."""
    return Score([judge(c, rules) for c in case_list])
