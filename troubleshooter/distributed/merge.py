"""Rank 0 turns every rank's payload into one session: results, cross-rank facts, rank and node tables.

Aggregation measures, rules decide: versions, shared variables and endpoints become
``{value: [ranks]}`` facts plus a count (the condition language has no ``len``), step times
become ratios to the median; the YAML checks in ``rules/checks/`` judge them.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable

from troubleshooter.core.engine import Observations
from troubleshooter.core.facts import Fact, Facts
from troubleshooter.run.local_world import SupervisedRank, classify_stuck
from troubleshooter.core.probe import ProbeResult
from troubleshooter.run.session import Session, sort_results
from troubleshooter.run.world_info import WorldInfo

JOB_PROBE = "job"  # the per-rank record of the distributed run itself (join outcome, comparisons)
# trainstep probe: synchronised step time (same on every rank) and this rank's own compute (no_sync)
STEP_P50, STEP_P90, LOCAL_P50 = "trainstep.step_p50_s", "trainstep.step_p90_s", "trainstep.local_p50_s"
VERSION_FACTS = {"torch": "hw.torch_version", "cuda": "hw.cuda_build", "nccl": "hw.nccl_version"}
UNSET = "<unset>"


@dataclass
class JobSession(Session):
    """A session whose NODE results belong to a host: every rank on that host sees them."""

    host_of: dict[int, str] = field(default_factory=dict)
    node_facts: dict[str, list[Fact]] = field(default_factory=dict)

    def observations(self) -> Observations:
        """As :class:`Session`, with each rank's node facts (from its host's local rank 0) under its own."""
        obs = super().observations()
        for rank, facts in obs.ranks.items():
            below = [Fact(f.key, f.value, f.source, rank) for f in self.node_facts.get(self.host_of.get(rank, ""), [])]
            obs.ranks[rank] = Facts(below).with_facts(facts.records())
        return obs


def by_value(values: dict[int, Any]) -> dict[str, list[int]]:
    """{rank: value} -> {value: [ranks]} (values as text, ranks sorted)."""
    grouped: dict[str, list[int]] = {}
    for rank in sorted(values):
        grouped.setdefault(str(values[rank]), []).append(rank)
    return grouped


def _spread(name: str, values: dict[int, Any]) -> dict[str, Any]:
    grouped = by_value(values)
    return {f"ranks.{name}s": grouped, f"ranks.{name}_count": len(grouped)} if values else {}


def _ratio_to_median(values: dict[Any, float]) -> dict[Any, float]:
    median = statistics.median(values.values()) if values else 0.0
    return {k: round(v / median, 3) for k, v in values.items()} if median > 0 and len(values) > 1 else {}


def build_session(session: JobSession, payloads: dict[int, dict], claims: dict[int, int], world_size: int,
                  launcher: str) -> None:
    """Fill ``session`` (results, world facts, extras) from the payloads rank 0 collected."""
    hosts = {r: p["host"] for r, p in payloads.items()}
    multi_node = len(set(hosts.values())) > 1
    session.host_of, session.node_facts = hosts, {}
    for rank, payload in sorted(payloads.items()):
        for data in payload.get("node_results", []):
            result = ProbeResult.from_dict(data)
            result.rank = rank if multi_node else None
            session.add_result(result)
            if multi_node:
                session.node_facts.setdefault(payload["host"], []).extend(
                    Fact(k, v, result.probe, rank) for k, v in result.facts.items())
        for data in payload.get("results", []):
            session.add_result(ProbeResult.from_dict(data))
    view = session.observations()

    def seen(rank: int, key: str, fallback: Any) -> Any:
        facts = view.rank_view(rank) if rank in view.ranks else view.facts
        return facts.get(key, fallback)

    versions = {name: {r: seen(r, VERSION_FACTS.get(name, ""), p["versions"].get(name)) for r, p in payloads.items()}
                for name in ("python", "torch", "cuda", "nccl")}
    steps = {r: view.ranks[r][LOCAL_P50] for r in payloads if r in view.ranks and LOCAL_P50 in view.ranks[r]}
    node_steps = {h: statistics.mean(steps[r] for r in steps if hosts[r] == h) for h in {hosts[r] for r in steps}}
    node_ratio = _ratio_to_median(node_steps) if multi_node else {}

    facts: dict[str, Any] = {}
    missing = sorted(r for r in range(world_size) if r not in claims)
    if missing:
        facts["world.missing_ranks"] = missing
    backend = next((p["backend"] for p in payloads.values() if p.get("backend")), None)
    for name in ("python", "torch", "cuda", "nccl"):
        facts.update(_spread(f"{name}_version", {r: v for r, v in versions[name].items() if v is not None}))
    facts.update(_spread("world_size", {r: p["identity"]["world_size"] for r, p in payloads.items()}))
    facts.update(_spread("master_port", {r: p["identity"]["master_port"] for r, p in payloads.items()}))
    facts.update(_spread("master_addr", {r: p["identity"]["master_addr"] for r, p in payloads.items()}))
    names = sorted({k for p in payloads.values() for k in p["env"]})
    differing = {n: by_value({r: p["env"].get(n, UNSET) for r, p in payloads.items()}) for n in names}
    differing = {n: g for n, g in differing.items() if len(g) > 1}
    facts.update({"ranks.env_disagreeing": sorted(differing), "ranks.env_values": differing,
                  "ranks.duplicate_claims": sorted(r for r, n in claims.items() if n > 1),
                  "ranks.out_of_range": sorted(r for r in claims if not 0 <= r < world_size),
                  "ranks.undelivered": sorted(r for r in claims if r not in payloads)})
    if steps:
        slowest = max(steps, key=steps.get)
        facts.update({"ranks.local_step_s": {str(r): v for r, v in steps.items()}, "ranks.slowest_rank": slowest})
    if node_ratio:
        facts.update({"nodes.step_ratio": node_ratio, "nodes.slowest_host": max(node_ratio, key=node_ratio.get)})
    facts.update(stuck_facts(payloads))
    session.run_facts.update(facts)
    session.world.update(WorldInfo(size=world_size, launcher=launcher, backend=backend, nodes=len(set(hosts.values()))))

    for rank, payload in sorted(payloads.items()):
        session.add_result(job_result(rank, payload, node_ratio.get(hosts[rank])))
    session.results[:] = sort_results(session.results)
    view = session.observations()
    session.extra["rank_table"] = rank_table(payloads, view, versions)
    session.extra["nodes"] = node_table(payloads, session.results, node_ratio)
    logs = {str(r): p["log_tail"] for r, p in payloads.items() if p.get("log_tail") and not p.get("done")}
    if logs:
        session.extra["rank_logs"] = logs


def job_result(rank: int, payload: dict, node_ratio: float | None) -> ProbeResult:
    """The per-rank record of the run: did it join, how long it took, how it compares to the others."""
    facts: dict[str, Any] = {}
    if payload.get("joined"):
        facts["world.init_s"] = payload["init_s"]
    elif payload.get("join_error"):
        facts["world.join_error"] = payload["join_error"]
    if node_ratio is not None:
        facts["job.node_step_ratio"] = node_ratio
    status = "ok" if payload.get("joined") else ("timeout" if "did not finish" in (payload.get("join_error") or "")
                                                 else "error")
    message = (f"joined the {payload.get('backend')} process group in {payload['init_s']:.2f} s"
               if payload.get("joined") else f"did not join: {payload.get('join_error')}")
    return ProbeResult(JOB_PROBE, status, facts, message, rank=rank, host=payload["host"],
                       duration_s=float(payload.get("join_duration_s") or 0.0))


def stuck_facts(payloads: dict[int, dict]) -> dict[str, Any]:
    """Across ranks: which ranks did not arrive where the others waited (the local world's classification)."""
    unfinished = {r: p for r, p in payloads.items() if not p.get("done")}
    if not unfinished:
        return {}
    order: list[str] = []
    for payload in payloads.values():
        order += [ph for ph in payload.get("phases", []) if ph not in order]
    states = {r: SupervisedRank(r, None, probe=(p.get("stuck") or {}).get("probe"), phase=(p.get("stuck") or {}).get("phase"),
                           done=bool(p.get("done"))) for r, p in payloads.items()}
    laggards, waiting = classify_stuck(states, order)
    first = payloads[min(unfinished)]["world_facts"]
    facts = {"world.stuck_ranks": laggards, "world.waiting_ranks": waiting,
             "world.stuck_phases": {str(r): f"{s.probe}:{s.phase}" for r, s in states.items() if s.probe},
             "world.teardown_reason": "; ".join(f"rank {r}: {p['world_facts'].get('world.teardown_reason', '?')}"
                                                for r, p in sorted(unfinished.items()))}
    if first.get("world.stuck_probe"):
        facts["world.stuck_probe"] = first["world.stuck_probe"]
    dead = sorted(r for r, p in unfinished.items() if p["world_facts"].get("world.dead_ranks"))
    if dead:
        facts["world.dead_ranks"] = dead
        facts["world.dead_exit_codes"] = {str(r): unfinished[r].get("exit_code") for r in dead}
    return facts


def _total(results: Iterable[ProbeResult]) -> float:
    return round(sum(r.duration_s for r in results), 3)


def rank_table(payloads: dict[int, dict], view: Observations, versions: dict[str, dict[int, Any]]) -> list[dict]:
    """One row per rank that delivered: where it ran, what it ran with, how long its phases took."""
    rows = []
    for rank, payload in sorted(payloads.items()):
        facts = view.ranks.get(rank, Facts())
        ident = payload["identity"]
        rows.append({
            "rank": rank, "host": payload["host"], "local_rank": ident["local_rank"],
            "device": payload.get("device") or "-", "backend": payload.get("backend") or "-",
            **{name: versions[name].get(rank) or "-" for name in ("torch", "cuda", "nccl", "python")},
            "init_s": round(payload["init_s"], 3) if payload.get("init_s") is not None else None,
            "probes_s": _total(ProbeResult.from_dict(d) for d in payload.get("results", [])),
            "step_p50_s": facts.get(STEP_P50), "step_p90_s": facts.get(STEP_P90), "local_p50_s": facts.get(LOCAL_P50),
            "status": "ok" if payload.get("done") else
            f"stuck in {(payload.get('stuck') or {}).get('probe')}:{(payload.get('stuck') or {}).get('phase')}",
        })
    return rows


def node_table(payloads: dict[int, dict], results: list[ProbeResult], node_ratio: dict[str, float]) -> list[dict]:
    """One row per host: its ranks, its node-probe outcomes and its step-time ratio to the median node."""
    nodes: dict[str, dict[str, Any]] = {}
    for rank, payload in sorted(payloads.items()):
        node = nodes.setdefault(payload["host"], {"host": payload["host"], "ranks": [], "node_probes": {},
                                                  "problems": 0, "step_ratio": node_ratio.get(payload["host"])})
        node["ranks"].append(rank)
        node["node_probes"].update({d["name"]: d["status"] for d in payload.get("node_results", [])})
    for result in results:
        host = payloads.get(result.rank, {}).get("host") if result.rank is not None else None
        if host in nodes and result.status != "ok":
            nodes[host]["problems"] += 1
    return list(nodes.values())
