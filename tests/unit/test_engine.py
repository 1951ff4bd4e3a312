"""Engine: checks over world and rank views, hit facts, fix templates, gates, ordering, tree walks."""

from __future__ import annotations

from pathlib import Path

import pytest

from troubleshooter.core import engine
from troubleshooter.core.engine import Observations, render_text, walk
from troubleshooter.core.facts import Fact, Facts
from troubleshooter.core.ruleset import load_rules

MINI = Path(__file__).resolve().parent.parent / "data" / "mini_rules"


@pytest.fixture(scope="module")
def rules():
    return load_rules(base=MINI)


def world(**values) -> Facts:
    return Facts(Fact(k.replace("__", "."), v, "network") for k, v in values.items())


def test_check_fires_with_evidence_and_rendered_fix(rules) -> None:
    obs = Observations(world(net__master_reachable=False, net__master_addr="10.0.0.9", net__master_port=29500))
    [finding] = engine.evaluate(rules, obs)
    assert finding.id == "network-unreachable"
    assert finding.title == "10.0.0.9 cannot be reached"
    assert finding.fix == "Open port 29500 on 10.0.0.9."
    assert finding.commands == ["nc -zv 10.0.0.9 29500"]
    [ev] = finding.evidence
    assert ev.detail == "TCP connect to 10.0.0.9:29500 failed" and ev.source == "network" and ev.rank is None


def test_quiet_when_fact_absent_or_healthy(rules) -> None:
    assert engine.evaluate(rules, Observations(world(net__master_reachable=True))) == []
    assert engine.evaluate(rules, Observations(world())) == []


def test_rank_scope_names_the_rank(rules) -> None:
    ranks = {0: Facts([Fact("step.p50_s", 0.2, "trainstep", 0)]), 1: Facts([Fact("step.p50_s", 2.5, "trainstep", 1)])}
    [finding] = engine.evaluate(rules, Observations(Facts(), ranks))
    assert finding.id == "straggler-rank" and finding.ranks == [1]
    assert finding.title == "Rank 1 is slower"


def test_world_fact_does_not_repeat_per_rank(rules) -> None:
    ranks = {r: Facts([Fact("step.p50_s", 0.1, "trainstep", r)]) for r in range(3)}
    obs = Observations(world(net__master_reachable=False), ranks)
    [finding] = engine.evaluate(rules, obs)
    assert len(finding.evidence) == 1 and finding.evidence[0].rank is None


def test_hit_facts_become_findings_with_location_and_user_names(rules) -> None:
    hits = [{"path": "train.py", "line": 42, "detail": "DataLoader `train_dl` has no sampler",
             "vars": {"loader": "train_dl", "dataset": "ds"}}]
    obs = Observations(Facts([Fact("scan.missing-distributed-sampler", hits, "scan")]))
    [finding] = engine.evaluate(rules, obs)
    assert finding.location == {"path": "train.py", "line": 42}
    assert finding.fix == "Pass `sampler=DistributedSampler(ds)` to `train_dl`."


def test_hit_fact_for_unknown_id_is_ignored(rules) -> None:
    obs = Observations(Facts([Fact("scan.not-a-finding", [{"detail": "x"}], "scan")]))
    assert engine.evaluate(rules, obs) == []


def test_root_cause_first(rules) -> None:
    obs = Observations(world(world__stuck_ranks=[1], net__master_reachable=False))
    findings = engine.evaluate(rules, obs)
    assert [f.id for f in findings] == ["network-unreachable", "collective-timeout"]
    assert findings[1].explained_by == ["network-unreachable"]


def test_gate_withholds_fix_until_evidence(rules) -> None:
    gated = engine.evaluate(rules, Observations(Facts([Fact("answer.ask-slow", "nccl", "answers")])))
    assert gated[0].id == "communication-bound" and gated[0].gate_unmet
    assert gated[0].fix.startswith("Not yet: profile a step first")
    measured = engine.evaluate(rules, Observations(world(trainstep__comm_exposed_fraction=0.7)))
    assert measured[0].gate_unmet is None and measured[0].fix == "Tune NCCL buckets."


def test_walk_asks_then_runs_probe_then_concludes(rules) -> None:
    tree = rules.trees["hang"]
    state = walk(tree, {})
    assert (state.kind, state.node_id) == ("ask", "ask-single")
    state = walk(tree, {"answer.ask-single": "yes"})
    assert (state.kind, state.probes) == ("probe", ["network"])
    facts = {"answer.ask-single": "yes", "probe.network.status": "ok", "net.master_reachable": False}
    state = walk(tree, facts)
    assert (state.kind, state.conclusions, state.path) == ("conclude", ["network-unreachable"],
                                                          ["ask-single", "run-net", "end-net"])
    facts["net.master_reachable"] = True
    assert walk(tree, facts).node_id == "end-none"


def test_walk_gate_needs_evidence_then_blocks(rules) -> None:
    tree = rules.trees["hang"]
    facts = {"answer.ask-single": "no", "answer.ask-slow": "nccl"}
    state = walk(tree, facts)
    assert (state.kind, state.probes, state.reason) == ("needs-evidence", ["trainstep"], "Profile before tuning NCCL.")
    facts.update({"probe.trainstep.status": "ok", "trainstep.comm_exposed_fraction": 0.1})
    assert walk(tree, facts).kind == "blocked"
    facts["trainstep.comm_exposed_fraction"] = 0.8
    assert walk(tree, facts).kind == "conclude"


def test_walk_unknown_answer_stays_put(rules) -> None:
    state = walk(rules.trees["hang"], {"answer.ask-single": "maybe"})
    assert state.node_id == "ask-single"


def test_rule_templates_are_sandboxed() -> None:
    evil = "{{ ''.__class__.__mro__[1].__subclasses__() }}"
    assert render_text(evil, {}) == "?"  # SecurityError -> a '?' placeholder, never executed
    assert render_text("{{ x | default('y') }}", {}) == "y"
