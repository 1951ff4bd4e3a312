"""Collect probe results and other evidence into Observations, findings and a report.

Shared by ``--auto``, ``probe``, the TUI and distributed mode, so every mode turns the same
evidence into the same findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from troubleshooter.core import engine
from troubleshooter.core.engine import Observations
from troubleshooter.core.facts import Fact, Facts
from troubleshooter.core.findings import Finding
from troubleshooter.core.probe import ProbeResult
from troubleshooter.report.document import build_report
from troubleshooter.core.ruleset import RuleSet
from troubleshooter.run.world_info import WorldInfo

STATUS_WEIGHT = {"timeout": 0, "error": 1, "ok": 2, "skipped": 3}


@dataclass
class Session:
    """Evidence gathered so far in one run (any mode); safe to turn into a report at any moment."""

    rules: RuleSet
    mode: str
    results: list[ProbeResult] = field(default_factory=list)
    world: WorldInfo = field(default_factory=WorldInfo)  # the report's world block and the world.* facts
    run_facts: dict[str, Any] = field(default_factory=dict)  # other facts about the run itself (source "run")
    extra_facts: list[Fact] = field(default_factory=list)  # scan, logs, answers, ...
    symptom: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    interrupted: bool = False

    def add_result(self, result: ProbeResult) -> None:
        """Record one probe result."""
        self.results.append(result)

    def add_facts(self, facts: Mapping[str, Any], source: str, rank: int | None = None) -> None:
        """Record facts from a non-probe source (scan, logs, answers)."""
        self.extra_facts += [Fact(k, v, source, rank) for k, v in facts.items()]

    def observations(self) -> Observations:
        """World view (node probes, run facts, scan/log/answers) and each rank's own facts."""
        world = [Fact(k, v, "run") for k, v in {**self.world.facts(), **self.run_facts}.items()]
        world += [Fact("run.mode", self.mode, "run")]
        ranks: dict[int, list[Fact]] = {}
        statuses: dict[str, list[str]] = {}
        for result in self.results:
            statuses.setdefault(result.probe, []).append(result.status)
            records = [Fact(k, v, result.probe, result.rank) for k, v in result.facts.items()]
            if result.rank is None:
                world += records
            else:
                ranks.setdefault(result.rank, []).extend(records)
        for probe_id, values in statuses.items():
            world.append(Fact(f"probe.{probe_id}.status", min(values, key=lambda s: STATUS_WEIGHT.get(s, 9)), "run"))
        world += self.extra_facts
        return Observations(Facts(world), {r: Facts(f) for r, f in ranks.items()})

    def findings(self) -> list[Finding]:
        """Evaluate the rules over everything gathered."""
        return engine.evaluate(self.rules, self.observations())

    def report(self) -> dict[str, Any]:
        """The report document for this session."""
        obs = self.observations()
        findings = engine.evaluate(self.rules, obs)
        extra = dict(self.extra)
        if self.interrupted:
            extra["interrupted"] = True
        return build_report(self.mode, findings, self.results, obs, self.world.block(), self.symptom, extra)


def sort_results(results: Iterable[ProbeResult]) -> list[ProbeResult]:
    """Node results first, then by rank, keeping probe order within a rank."""
    indexed = list(enumerate(results))
    return [r for _, r in sorted(indexed, key=lambda p: (-1 if p[1].rank is None else p[1].rank, p[0]))]
