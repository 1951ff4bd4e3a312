"""The rule engine: pure functions from facts to findings, and from a tree node to the next step.

Rules decide, probes measure. ``evaluate`` runs every check over the world view and each
rank's view, turns scanner/log hits (``scan.<id>``, ``log.<id>`` facts) into findings,
renders fixes (with evidence gates), and orders findings root cause first.
``walk`` follows a decision tree as far as the known facts allow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from troubleshooter.core import conditions
from troubleshooter.core.facts import Facts
from troubleshooter.core.findings import SEVERITY_RANK, Evidence, Finding
from troubleshooter.core.ruleset import CATEGORIES, RuleSet
from troubleshooter.core.ruletext import render_text
from troubleshooter.core.values import readable

HIT_NAMESPACES = ("scan", "log", "live", "walk")  # walk: a decision-tree conclusion (TUI)


@dataclass
class Observations:
    """All facts of a run: the world/node view, and each rank's own facts."""

    facts: Facts = field(default_factory=Facts)
    ranks: dict[int, Facts] = field(default_factory=dict)

    def rank_view(self, rank: int) -> Facts:
        """World facts overlaid with ``rank``'s facts."""
        return self.facts.with_facts(self.ranks[rank].records())


def _fmt(key: str, value: Any) -> str:
    if isinstance(value, (list, tuple)) and len(value) > 8:
        return f"{readable(key, list(value[:8]))}, … {len(value) - 8} more"
    return readable(key, value)


def _check_evidence(check: dict, view: Facts, rank: int | None) -> Evidence:
    keys = list(check.get("evidence") or []) or [k for k, _ in conditions.facts_read(check["when"])]
    cited = {k: view[k] for k in keys if k in view}
    sources = sorted({view.provenance(k).source for k in cited if view.provenance(k)})
    context = {"facts": dict(view), "rank": rank, **{k.replace(".", "_"): v for k, v in cited.items()}}
    detail = render_text(check["detail"], context) if check.get("detail") else \
        "; ".join(f"{k} = {_fmt(k, v)}" for k, v in cited.items())
    hit_vars = {name: render_text(str(template), context) for name, template in (check.get("vars") or {}).items()}
    return Evidence(source=", ".join(sources) or "rules", detail=detail, rank=rank, facts=cited, vars=hit_vars)


def _named_ranks(check: dict, view: Facts) -> list[int | None]:
    """The ranks a world check's evidence names: those of its ``ranks:`` fact (a list), else none."""
    named = view.get(check["ranks"]) if check.get("ranks") else None
    ranks = sorted({r for r in named if isinstance(r, int)}) if isinstance(named, list) else []
    return ranks or [None]


def _rank_specific(check: dict, view: Facts) -> bool:
    """True when the check read at least one fact that a rank produced."""
    for key, _ in conditions.facts_read(check["when"]):
        record = view.provenance(key)
        if record is not None and record.rank is not None:
            return True
    return False


def _hit_evidence(namespace: str, hit: Any, view: Facts, key: str) -> Evidence:
    record = view.provenance(key)
    if not isinstance(hit, dict):
        return Evidence(source=namespace, detail=str(hit), rank=record.rank if record else None)
    severity = hit.get("severity") if hit.get("severity") in SEVERITY_RANK else None
    return Evidence(
        source=hit.get("source", namespace), detail=str(hit.get("detail", "")), rank=hit.get("rank"),
        path=hit.get("path"), line=hit.get("line"), vars=dict(hit.get("vars") or {}),
        order=hit.get("order", hit.get("line")), severity=severity, root=bool(hit.get("root")),
        echo=bool(hit.get("echo")),
    )


def evaluate(rules: RuleSet, obs: Observations) -> list[Finding]:
    """Every finding the facts support, ordered root cause first."""
    raw: dict[str, list[tuple[str, Evidence]]] = {}
    world = obs.facts

    def add(finding_id: str, origin: str, ev: Evidence) -> None:
        raw.setdefault(finding_id, []).append((origin, ev))

    for key in world:
        namespace, _, ident = key.partition(".")
        if namespace in HIT_NAMESPACES and ident in rules.findings and isinstance(world[key], list):
            for hit in world[key]:
                add(ident, f"{namespace}-hits", _hit_evidence(namespace, hit, world, key))
    for rank, facts in obs.ranks.items():
        for key in facts:
            namespace, _, ident = key.partition(".")
            if namespace in HIT_NAMESPACES and ident in rules.findings and isinstance(facts[key], list):
                for hit in facts[key]:
                    ev = _hit_evidence(namespace, hit, facts, key)
                    ev.rank = rank if ev.rank is None else ev.rank
                    add(ident, f"{namespace}-hits", ev)

    fired_checks: set[str] = set()
    for _ in range(4):  # checks may depend on findings: iterate to a fixpoint
        present = frozenset(raw)
        changed = False
        for check_id, check in rules.checks.items():
            if check_id in fired_checks:
                continue
            scope = check.get("scope", "any")
            hits: list[Evidence] = []
            if scope in ("any", "world") and conditions.evaluate(check["when"], world, present) is True:
                hits += [_check_evidence(check, world, rank) for rank in _named_ranks(check, world)]
            if scope in ("any", "rank") and not hits:
                for rank in sorted(obs.ranks):
                    view = obs.rank_view(rank)
                    if conditions.evaluate(check["when"], view, present) is True and \
                            (scope == "rank" or _rank_specific(check, view)):
                        hits.append(_check_evidence(check, view, rank))
            for ev in hits:
                add(check["finding"], check_id, ev)
            if hits:
                fired_checks.add(check_id)
                changed = True
        if not changed:
            break
    findings = [_build(rules, fid, items, obs) for fid, items in raw.items()]
    return order_findings(rules, findings)


def _build(rules: RuleSet, finding_id: str, items: list[tuple[str, Evidence]], obs: Observations) -> Finding:
    entry = rules.findings[finding_id]
    evidence = [ev for _, ev in items]
    first_rank = next((ev.rank for ev in evidence if ev.rank is not None and ev.rank in obs.ranks), None)
    world = obs.rank_view(first_rank) if first_rank is not None else obs.facts
    checks = sorted({origin for origin, _ in items})
    severities = [(rules.checks[origin].get("severity") if origin in rules.checks else ev.severity) or entry["severity"]
                  for origin, ev in items]
    severity = min(severities, key=SEVERITY_RANK.get)
    hit_vars = next((ev.vars for ev in evidence if ev.vars), {})
    context = {"facts": dict(world), "evidence": evidence, "hit": hit_vars, "ranks": sorted(
        {ev.rank for ev in evidence if ev.rank is not None}), "first": evidence[0] if evidence else None}
    finding = Finding(
        id=finding_id, severity=severity, title=" ".join(render_text(entry["title"], context).split()),
        category=entry["category"],
        why=render_text(entry["why"], context), evidence=evidence,
        commands=[render_text(c, context) for c in entry.get("commands") or []],
        references=list(entry.get("references") or []), checks=checks,
    )
    gate = entry.get("gate")
    views = [obs.facts, *(obs.rank_view(r) for r in sorted(obs.ranks))]
    if gate and not any(conditions.evaluate(gate["when"], view) is True for view in views):
        finding.gate_unmet = render_text(gate["unmet"], context)
        finding.fix = f"Not yet: {finding.gate_unmet}"
        finding.commands = []
    else:
        finding.fix = render_text(entry["fix"], context)
    return finding


def order_findings(rules: RuleSet, findings: list[Finding]) -> list[Finding]:
    """Root cause first.

    A finding that explains another precedes it; evidence its source marked as the root cause
    comes first, pure echoes last; then severity, category, time of first evidence.
    """
    present = {f.id for f in findings}
    for finding in findings:
        finding.explained_by = sorted(
            other for other in present
            if other != finding.id and finding.id in (rules.findings[other].get("explains") or []))

    by_id = {f.id: f for f in findings}

    def roots(fid: str, seen: frozenset = frozenset()) -> list[str]:
        parents = [p for p in by_id[fid].explained_by if p not in seen]
        return [fid] if not parents else [r for p in parents for r in roots(p, seen | {fid})]

    def first_seen(f: Finding) -> float:
        orders = [ev.order for ev in f.evidence if isinstance(ev.order, (int, float))]
        return min(orders) if orders else float("inf")

    cat_rank = {c: i for i, c in enumerate(CATEGORIES)}

    def own_key(f: Finding) -> tuple:
        return (SEVERITY_RANK.get(f.severity, 9), cat_rank.get(f.category, 99), first_seen(f), f.id)

    def echo_only(f: Finding) -> bool:
        return bool(f.evidence) and all(ev.echo for ev in f.evidence)

    def key(f: Finding) -> tuple:
        top = [by_id[r] for r in roots(f.id)]
        root = min(((not any(ev.root for ev in t.evidence), echo_only(t), *own_key(t)) for t in top))
        return (root, f.id not in roots(f.id), own_key(f))

    return sorted(findings, key=key)


# ---- decision trees -------------------------------------------------------------------------


@dataclass
class WalkState:
    """Where a tree walk stands: the path so far and what the current node needs."""

    tree: str
    path: list[str]
    node_id: str
    kind: str  # "ask" | "probe" | "conclude" | "needs-evidence" | "blocked"
    node: dict
    probes: list[str] = field(default_factory=list)
    conclusions: list[str] = field(default_factory=list)
    reason: str = ""


def answer_key(node_id: str) -> str:
    """The fact key an answer to ``node_id`` is stored under."""
    return f"answer.{node_id}"


def probe_ran_key(probe_id: str) -> str:
    """The fact key that records a probe's status."""
    return f"probe.{probe_id}.status"


def _probes_of(node: dict) -> list[str]:
    probe = node.get("probe")
    return [probe] if isinstance(probe, str) else list(probe or [])


def next_node(tree: dict, node_id: str, facts: Mapping[str, Any], findings: frozenset[str] = frozenset()) -> str | None:
    """The node after ``node_id`` given the facts, or None if the node still needs input (or is a leaf)."""
    node = tree["nodes"][node_id]
    if "ask" in node:
        answer = facts.get(answer_key(node_id))
        return node["answers"].get(answer) if answer is not None else None
    if "probe" in node and not all(probe_ran_key(p) in facts for p in _probes_of(node)):
        return None
    if "probe" in node or "branch" in node:
        for branch in node.get("then") or []:
            if conditions.evaluate(branch["when"], facts, findings) is True:
                return branch["goto"]
        return node["else"]
    return None


def walk(tree: dict, facts: Mapping[str, Any], findings: frozenset[str] = frozenset(), start: str | None = None) -> WalkState:
    """Follow ``tree`` from ``start`` as far as ``facts`` allow; a pure function of its inputs."""
    node_id = start or tree["start"]
    path = [node_id]
    while True:
        nxt = next_node(tree, node_id, facts, findings)
        if nxt is None or nxt in path:  # a loop in the data must not hang the walk
            break
        node_id = nxt
        path.append(node_id)
    node = tree["nodes"][node_id]
    if "ask" in node:
        return WalkState(tree["id"], path, node_id, "ask", node)
    if "probe" in node:
        return WalkState(tree["id"], path, node_id, "probe", node, probes=_probes_of(node))
    concl = node.get("conclude")
    conclusions = [c for c in ([concl] if isinstance(concl, str) else list(concl or [])) if c != "none"]
    req = node.get("requires")
    if req and conditions.evaluate(req["when"], facts, findings) is not True:
        probe = req.get("probe")
        if probe and probe_ran_key(probe) not in facts:
            return WalkState(tree["id"], path, node_id, "needs-evidence", node, probes=[probe],
                             conclusions=conclusions, reason=req["reason"])
        return WalkState(tree["id"], path, node_id, "blocked", node, conclusions=conclusions, reason=req["reason"])
    return WalkState(tree["id"], path, node_id, "conclude", node, conclusions=conclusions)
