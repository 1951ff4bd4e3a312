"""Report documents for the render, browser and benchmark tests.

``healthy`` and the scaling run are real ``troubleshoot --auto`` documents recorded on a 2-vCPU VM
(gloo, 2 ranks). The others derive from them: ``many_findings`` evaluates the real rules over the
``fires`` facts of many check fixtures, ``hung`` is a 4-rank world where ranks 2 and 3 never reach
the barrier, ``synthetic_world`` a 64-rank world (8 nodes) with one late and one slow rank, shaped
like the recorded probe results.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import yaml

from troubleshooter.core.engine import Observations, evaluate
from troubleshooter.core.facts import Fact, Facts
from troubleshooter.core.paths import rules_dir
from troubleshooter.core.probe import ProbeResult
from troubleshooter.core.ruleset import load_rules
from troubleshooter.report.document import build_report

DATA = Path(__file__).resolve().parent / "data"


def _load(name: str) -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def healthy() -> dict:
    """The recorded 2-rank run: start-up, bandwidth sweep, train step; no finding."""
    return _load("auto-gloo-2.json")


def with_scaling() -> dict:
    """The recorded run plus the recorded scaling run (and its poor-scaling finding): every chart."""
    doc, scaling = healthy(), _load("scaling-gloo-2.json")
    doc["probes"] += scaling["probes"]
    doc["findings"] += scaling["findings"]
    for mine, theirs in zip(doc["ranks"], scaling["ranks"]):
        mine["probes"] += theirs["probes"]
        mine["facts"].update(theirs["facts"])
    doc["summary"] = {k: doc["summary"].get(k, 0) + scaling["summary"].get(k, 0) for k in ("error", "warning", "info")}
    return doc


def _document(facts: dict, rank_facts: dict[int, dict], results: list[ProbeResult], world: dict,
              extra: dict | None = None) -> dict:
    obs = Observations(Facts([Fact(k, v, "fixture") for k, v in facts.items()]),
                       {r: Facts([Fact(k, v, "fixture", r) for k, v in f.items()]) for r, f in rank_facts.items()})
    return build_report("auto", evaluate(load_rules(), obs), results, obs, world, extra=extra)


def many_findings(checks: int = 40) -> dict:
    """The recorded run's measurements with the ``fires`` facts of ``checks`` check fixtures merged in."""
    base = healthy()
    facts = dict(base["facts"])
    for path in sorted((rules_dir() / "checks").glob("*.cases.yaml"))[:checks]:
        fires = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("fires") or []
        if fires and isinstance(fires[0], dict):
            facts.update({k: v for k, v in fires[0].items() if k not in facts})
    results = [ProbeResult.from_dict(p) for p in base["probes"]]
    return _document(facts, {r["rank"]: r["facts"] for r in base["ranks"]}, results, base["world"])


def _template(doc: dict, name: str) -> dict:
    return next(p for p in doc["probes"] if p["name"] == name and p.get("rank") == 0)


def hung(size: int = 4, stuck: tuple[int, ...] = (2, 3)) -> dict:
    """Ranks in ``stuck`` never arrive: the others time out at the barrier; stacks show who waits where."""
    base = healthy()
    results, rank_facts = [], {}
    startup = _template(base, "startup")
    for rank in range(size):
        if rank in stuck:
            results.append(ProbeResult("collective", "timeout", {}, "did not finish within 30 s", rank=rank,
                                       host="node1", duration_s=30.0))
            rank_facts[rank] = {}
            continue
        facts = {"collective.barrier_ok": False, "collective.missing_ranks": list(stuck),
                 "collective.barrier_error": f"Ranks {', '.join(map(str, stuck))} failed to pass monitoredBarrier"}
        results.append(ProbeResult("collective", "ok", facts, "monitored barrier failed", rank=rank, host="node0",
                                   duration_s=7.6))
        start = copy.deepcopy(startup)
        start["rank"], start["host"] = rank, "node0"
        results.append(ProbeResult.from_dict(start))
        rank_facts[rank] = {**facts, **start["facts"]}
    world = {"world.stuck_ranks": list(stuck), "world.waiting_ranks": [r for r in range(size) if r not in stuck],
             "world.stuck_phases": {str(r): "collective:barrier" if r not in stuck else "collective:init"
                                    for r in range(size)}}
    stacks = {"groups": [
        {"ranks": [r for r in range(size) if r not in stuck], "what": "waiting in monitored_barrier",
         "where": "torch/distributed/distributed_c10d.py:4716", "odd_one_out": False,
         "frames": ["probes/collective.py:120 run", "torch/distributed/distributed_c10d.py:4716 monitored_barrier"]},
        {"ranks": list(stuck), "what": "blocked in init_process_group", "where": "torch/distributed/rendezvous.py:258",
         "odd_one_out": True,
         "frames": ["troubleshooter/run/rank_worker.py:88 main", "torch/distributed/rendezvous.py:258 _create_c10d_store"]},
    ]}
    return _document(world, rank_facts, results, {"size": size, "backend": "gloo", "launcher": "local"},
                     extra={"stacks": stacks})


def synthetic_world(size: int = 64, late: int = 37, slow: int = 42, seed: int = 7) -> dict:
    """``size`` ranks on nodes of 8, shaped like the recorded results; rank ``late`` starts late, ``slow`` steps slowly."""
    base, rng = healthy(), random.Random(seed)
    startup, collective, trainstep = (_template(base, n) for n in ("startup", "collective", "trainstep"))
    results, rank_facts = [], {}
    p50s = [0.026 * (1.9 if r == slow else rng.uniform(0.95, 1.08)) for r in range(size)]
    for rank in range(size):
        host = f"node{rank // 8:02d}"
        phases = {k: v * rng.uniform(0.9, 1.15) for k, v in startup["facts"]["startup.phase_s"].items()}
        if rank == late:  # a slow checkpoint read on one node
            phases["model-load"] += 0.9
        start = copy.deepcopy(startup)
        start["facts"].update({"startup.phase_s": {k: round(v, 4) for k, v in phases.items()},
                               "startup.total_s": sum(phases.values()), "startup.slowest_rank": late,
                               "startup.slowest_phase": "model-load" if rank == late else "ddp-wrap"})
        coll = copy.deepcopy(collective)
        coll["facts"]["collective.init_s"] = phases["init"]
        step = copy.deepcopy(trainstep)
        compute = rng.uniform(0.45, 0.6)
        step["facts"].update({"trainstep.step_p50_s": p50s[rank], "trainstep.step_p90_s": p50s[rank] * rng.uniform(1.1, 1.6),
                              "trainstep.slowest_rank": slow, "trainstep.rank_p50_s": p50s,
                              "trainstep.slowest_ratio": max(p50s) / sorted(p50s)[size // 2],
                              "trainstep.rank_slowdown": p50s[rank] / sorted(p50s)[size // 2]})
        step["details"]["split"] = {"step_s": 0.05, "compute_s": 0.05 * compute, "comm_s": 0.03,
                                    "overlap_s": 0.01, "exposed_s": 0.05 * (0.9 - compute)}
        facts = {}
        for probe in (start, coll, step):
            probe["rank"], probe["host"] = rank, host
            results.append(ProbeResult.from_dict(probe))
            facts.update(probe["facts"])
        rank_facts[rank] = facts
    world = {k: v for k, v in base["facts"].items() if not k.startswith("world.")}
    world.update({"world.size": size, "world.nodes": size // 8})
    return _document(world, rank_facts, results, {"size": size, "backend": "gloo", "launcher": "torchrun", "nodes": size // 8})
