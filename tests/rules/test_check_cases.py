"""Every check's fixture cases, kept beside the rule (`rules/checks/<id>.cases.yaml`), Ruff-style.

Each case is a set of facts (the world view of a run). Under a ``fires`` case the real engine must
raise the check's finding *through that check*; under a ``quiet`` case it must not. Every fact a
case names must be a declared fact of the right type, so cases cannot drift from what probes produce.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from troubleshooter.core.engine import Observations, evaluate
from troubleshooter.core.factcatalog import all_fact_specs
from troubleshooter.core.facts import Facts
from troubleshooter.core.registry import Registry
from troubleshooter.core.ruleset import CASES_SUFFIX, load_rules

CHECKS_DIR = Path(__file__).resolve().parents[2] / "rules" / "checks"
RULES = load_rules()
SPECS = all_fact_specs(RULES, Registry.load([]))


def _cases() -> list[tuple[str, str, int, dict]]:
    out = []
    for path in sorted(CHECKS_DIR.glob(f"*{CASES_SUFFIX}")):
        check_id = path.name[: -len(CASES_SUFFIX)]
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for kind in ("fires", "quiet"):
            for index, facts in enumerate(data.get(kind) or []):
                out.append((check_id, kind, index, facts))
    return out


CASES = _cases()


def _fired_by(check_id: str, facts: dict) -> bool:
    """True when the engine, given ``facts`` as a run's world view (one rank), fires ``check_id``."""
    obs = Observations(facts=Facts.from_dict(facts, source="case"), ranks={0: Facts()})
    return any(check_id in finding.checks for finding in evaluate(RULES, obs))


@pytest.mark.parametrize(("check_id", "kind", "index", "facts"), CASES,
                         ids=[f"{c}-{k}{i}" for c, k, i, _ in CASES])
def test_case(check_id, kind, index, facts):
    assert check_id in RULES.checks, f"{check_id}{CASES_SUFFIX} has no check {check_id}.yaml"
    for key, value in facts.items():
        spec = SPECS.get(key)
        assert spec is not None, f"{check_id} {kind}[{index}]: {key} is not a declared fact"
        assert spec.accepts(value), f"{check_id} {kind}[{index}]: {key} = {value!r} is not a {spec.type}"
    fired = _fired_by(check_id, facts)
    assert fired is (kind == "fires"), f"{check_id} {kind}[{index}] {'did not fire' if kind == 'fires' else 'fired'}"


@pytest.mark.parametrize("check_id", sorted(RULES.checks))
def test_every_check_has_fires_and_quiet_cases(check_id):
    kinds = {kind for cid, kind, _, _ in CASES if cid == check_id}
    assert kinds == {"fires", "quiet"}, f"rules/checks/{check_id}{CASES_SUFFIX} needs a fires and a quiet case"
