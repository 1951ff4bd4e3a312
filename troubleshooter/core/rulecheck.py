"""``troubleshoot rules check``: the knowledge base is loadable, consistent and complete.

:func:`run_check` loads everything with ``verify=True`` (templates trial-rendered, regular
expressions checked, fixture cases read), then runs each function of ``KNOWLEDGE_CHECKS``: each
takes the loaded rules and the probe registry and returns the problems it found.
"""

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
    return _issue_at(rules.sources.get(kind_id, "rules"), line, message, help, crumb)


def _issue_at(path: str, line: int | None, message: str, help: str = "", crumb: str = "") -> RuleIssue:
    excerpt = ""
    if line:
        try:
            excerpt = Path(path).read_text(encoding="utf-8").splitlines()[line - 1].rstrip()
        except (OSError, IndexError):
            pass
    return RuleIssue(path, line, message, help, crumb, excerpt)


def check_rules(rules: RuleSet, registry: Registry) -> list[RuleIssue]:
    """Every problem of every check in KNOWLEDGE_CHECKS."""
    return [issue for check in KNOWLEDGE_CHECKS for issue in check(rules, registry)]


def check_facts_and_probes(rules: RuleSet, registry: Registry) -> list[RuleIssue]:
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
        if check.get("ranks"):
            unknown_fact(f"check:{cid}", check["ranks"], check.line_of("ranks"), "ranks")
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


def check_signature_references(rules: RuleSet, registry: Registry) -> list[RuleIssue]:
    """Log signatures name catalog findings and refine after signatures that exist."""
    from troubleshooter.logs.signatures import check_references

    return [_issue_at(path, line, message) for path, line, message in check_references(rules.signatures, rules.findings)]


def check_cases(rules: RuleSet, registry: Registry) -> list[RuleIssue]:
    """Each ``checks/<id>.cases.yaml``: its facts are declared facts of the right type, ``fires`` cases raise
    the check's finding through that check, ``quiet`` cases do not."""
    from troubleshooter.core.engine import Observations, evaluate
    from troubleshooter.core.facts import Facts

    specs = all_fact_specs(rules, registry)
    issues: list[RuleIssue] = []
    for check_id, cases in rules.cases.items():
        if check_id not in rules.checks:
            continue  # reported by the loader
        for kind in ("fires", "quiet"):
            for index, facts in enumerate(cases.get(kind) or []):
                line = cases[kind].line_of(index)
                bad = [f"{key} is not a declared fact" if key not in specs else f"{key} = {value!r} is not a {specs[key].type}"
                       for key, value in facts.items() if key not in specs or not specs[key].accepts(value)]
                if bad:
                    issues.extend(_issue(rules, f"cases:{check_id}", line, f"{kind}[{index}]: {b}") for b in bad)
                    continue
                obs = Observations(facts=Facts.from_dict(dict(facts), source="case"), ranks={0: Facts()})
                fired = any(check_id in finding.checks for finding in evaluate(rules, obs))
                if fired != (kind == "fires"):
                    issues.append(_issue(rules, f"cases:{check_id}", line,
                                         f"{kind}[{index}] {'did not fire' if kind == 'fires' else 'fired'} check {check_id!r}",
                                         "fix the check's `when` or the case"))
    return issues


# The checks `rules check` runs after loading; add a function (rules, registry) -> [RuleIssue] here.
KNOWLEDGE_CHECKS = (check_facts_and_probes, check_signature_references, check_cases)


def run_check(rule_dirs: Iterable[Path] = (), probe_dirs: Iterable[Path] = (), base: Path | None = None) -> tuple[RuleSet, Registry]:
    """Load everything (verified) and raise RuleFileError listing every problem."""
    rules = load_rules(rule_dirs, base=base, verify=True)
    registry = Registry.load(probe_dirs)
    issues = check_rules(rules, registry)
    if issues:
        raise RuleFileError(issues)
    return rules, registry
