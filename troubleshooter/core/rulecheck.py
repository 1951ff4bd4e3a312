"""``troubleshoot rules check``: the knowledge base is loadable, consistent and complete."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Iterable

from troubleshooter.core import conditions
from troubleshooter.core.errors import RuleFileError, RuleIssue
from troubleshooter.core.factcatalog import all_fact_specs
from troubleshooter.core.registry import Registry
from troubleshooter.core.ruleset import RuleSet, load_rules


def _issue(rules: RuleSet, kind_id: str, line: int | None, message: str, help: str = "", crumb: str = "") -> RuleIssue:
    path = rules.sources.get(kind_id, "rules")
    excerpt = ""
    if line:
        try:
            excerpt = Path(path).read_text(encoding="utf-8").splitlines()[line - 1].rstrip()
        except (OSError, IndexError):
            pass
    return RuleIssue(path, line, message, help, crumb, excerpt)


def check_rules(rules: RuleSet, registry: Registry) -> list[RuleIssue]:
    """Problems that need the probes too: unknown facts read by rules, unknown probes in trees."""
    specs = all_fact_specs(rules, registry)
    issues: list[RuleIssue] = []

    def unknown_fact(kind_id: str, key: str, line: int | None, crumb: str) -> None:
        if key in specs:
            return
        close = difflib.get_close_matches(key, list(specs), n=1)
        issues.append(_issue(rules, kind_id, line, f"unknown fact {key!r}",
                             f"did you mean {close[0]!r}? (see `troubleshoot rules facts`)" if close
                             else "no probe, scanner, log signature or question declares it", crumb))

    def scan_condition(kind_id: str, cond, crumb: str) -> None:
        for key, line in conditions.facts_read(cond):
            unknown_fact(kind_id, key, line, crumb)

    for cid, check in rules.checks.items():
        scan_condition(f"check:{cid}", check["when"], "when")
        for i, key in enumerate(check.get("evidence") or []):
            unknown_fact(f"check:{cid}", key, check["evidence"].line_of(i), "evidence")
    for fid, finding in rules.findings.items():
        if "gate" in finding:
            scan_condition(f"finding:{fid}", finding["gate"]["when"], "gate › when")
    for tid, tree in rules.trees.items():
        for node_id, node in tree["nodes"].items():
            crumb = f"nodes › {node_id}"
            probes = node.get("probe") or []
            probes = [probes] if isinstance(probes, str) else probes
            if node.get("requires", {}).get("probe"):
                probes = [*probes, node["requires"]["probe"]]
            for probe_id in probes:
                if probe_id not in registry.probes:
                    close = difflib.get_close_matches(probe_id, list(registry.probes), n=1)
                    issues.append(_issue(rules, f"tree:{tid}", node.line, f"unknown probe {probe_id!r}",
                                         f"did you mean {close[0]!r}?" if close else
                                         f"known probes: {', '.join(sorted(registry.probes))}", crumb))
            for i, branch in enumerate(node.get("then") or []):
                scan_condition(f"tree:{tid}", branch["when"], f"{crumb} › then[{i}]")
            if "requires" in node:
                scan_condition(f"tree:{tid}", node["requires"]["when"], f"{crumb} › requires")
    for chk_id, checklist in rules.checklists.items():
        for group in checklist["groups"]:
            for item in group["items"]:
                for key in ("flagged_when", "cleared_when"):
                    if key in item:
                        scan_condition(f"checklist:{chk_id}", item[key], f"{group['id']} › {item['id']}")
                if item.get("probe") and item["probe"] not in registry.probes:
                    issues.append(_issue(rules, f"checklist:{chk_id}", item.line, f"unknown probe {item['probe']!r}"))
    return issues


def run_check(rule_dirs: Iterable[Path] = (), probe_dirs: Iterable[Path] = (), base: Path | None = None) -> tuple[RuleSet, Registry]:
    """Load everything and raise RuleFileError listing every problem."""
    rules = load_rules(rule_dirs, base=base)
    registry = Registry.load(probe_dirs)
    issues = check_rules(rules, registry)
    if issues:
        raise RuleFileError(issues)
    return rules, registry
