"""Meta-tests of the shipped knowledge base in rules/ (kube-linter "well-formed" style).

They check completeness against the public id list, that every rendered text is a real text
without evidence, that the tables hold what issue 2 asks for, and that every decision tree can be
walked to each of its conclusions by the real engine.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from troubleshooter.core import conditions
from troubleshooter.core.engine import Observations, answer_key, evaluate, probe_ran_key, render_text, walk
from troubleshooter.core.factcatalog import all_fact_specs
from troubleshooter.core.facts import Facts
from troubleshooter.core.registry import Registry
from troubleshooter.core.rulecheck import check_rules
from troubleshooter.core.ruleset import load_rules

REPO = Path(__file__).resolve().parents[2]
IDS_MD = REPO / "docs" / "diagnosis-ids.md"  # the public id contract, kept in the repo
TREES = ("hang-at-startup", "hang-mid-training", "slow-startup", "slow-training", "ranks-diverge",
         "device-errors", "multi-node-fails", "launch-or-backend-crash")
PITFALL_IDS = (
    "dataparallel", "ddp-before-to-device", "missing-distributed-sampler", "missing-set-epoch",
    "batchnorm-not-synced", "loss-not-on-device", "hardcoded-cuda0", "unsynced-init-seed",
    "grad-accum-without-no-sync", "unnecessary-find-unused-parameters", "nccl-tuning-before-profiling",
    "checkpoint-without-module", "network-unreachable", "wrong-network-interface",
    "no-barrier-before-checkpoint-load", "logging-from-all-ranks", "unsynced-dropout-rng",
    "shuffle-with-sampler", "mixed-sync-async-collectives", "uneven-last-batch",
)
EMPTY_CONTEXT = {"facts": {}, "evidence": [], "hit": {}, "ranks": [], "first": None}


@pytest.fixture(scope="module")
def rules():
    return load_rules(base=REPO / "rules")


@pytest.fixture(scope="module")
def registry():
    return Registry.load([])


def _catalog_ids() -> list[str]:
    text = IDS_MD.read_text(encoding="utf-8")
    return [m for m in re.findall(r"^\|\s*`?([a-z0-9]+(?:-[a-z0-9]+)*)`?\s*\|", text, re.M) if m != "id"]


# ---- the catalog ---------------------------------------------------------------------------


def test_every_public_id_has_a_catalog_entry(rules):
    ids = _catalog_ids()
    assert len(ids) >= 50, "could not parse the id table"
    assert sorted(set(ids) - set(rules.findings)) == []


def test_catalog_has_no_id_outside_the_public_list(rules):
    assert sorted(set(rules.findings) - set(_catalog_ids())) == []


def test_ids_match_file_stems_and_codes_are_unique(rules):
    for fid in rules.findings:
        assert Path(rules.sources[f"finding:{fid}"]).stem == fid
    codes = [f["code"] for f in rules.findings.values()]
    assert all(re.fullmatch(r"DDP\d{3}", c) for c in codes)
    assert len(codes) == len(set(codes))


def test_references_are_urls_or_issue_refs(rules):
    for fid, entry in rules.findings.items():
        assert entry["references"], fid
        for ref in entry["references"]:
            assert re.match(r"https?://\S+$", ref) or re.match(r"[\w.-]+/[\w.-]+#\d+$", ref), (fid, ref)


def test_priorities_and_explains_are_acyclic(rules):
    graph = {fid: list(e.get("explains") or []) for fid, e in rules.findings.items()}
    for fid, entry in rules.findings.items():
        assert entry.get("priority") in ("High", "Medium", "Low"), fid
        assert fid not in graph[fid]

    def visit(node: str, stack: tuple[str, ...]) -> None:
        for nxt in graph[node]:
            assert nxt not in stack, f"explains cycle: {' -> '.join(stack + (nxt,))}"
            visit(nxt, stack + (nxt,))

    for fid in graph:
        visit(fid, (fid,))


@pytest.mark.parametrize("field", ["title", "why", "fix"])
def test_every_text_renders_without_evidence(rules, field):
    for fid, entry in rules.findings.items():
        out = render_text(entry[field], EMPTY_CONTEXT)
        assert out and "{{" not in out and "{%" not in out, (fid, field, out[:200])
        for command in entry.get("commands") or []:
            assert "{{" not in render_text(command, EMPTY_CONTEXT), (fid, command)


def test_fix_uses_the_users_names(rules):
    context = dict(EMPTY_CONTEXT, hit={"model": "net", "loader": "train_dl", "sampler": "train_sampler",
                                       "dataset": "train_ds"})
    fix = render_text(rules.findings["missing-distributed-sampler"]["fix"], context)
    assert "train_sampler.set_epoch(epoch)" in fix and "DistributedSampler(train_ds" in fix
    assert "DDP(net" in render_text(rules.findings["ddp-before-to-device"]["fix"], context)
    facts = dict(EMPTY_CONTEXT, facts={"net.master_addr": "10.1.2.3", "net.master_port": "29511"})
    assert "nc -zv -w 3 10.1.2.3 29511" in render_text(rules.findings["network-unreachable"]["fix"], facts)


def test_no_fix_recommends_fewer_gpus(rules):
    for fid, entry in rules.findings.items():
        text = render_text(entry["fix"], EMPTY_CONTEXT).lower()
        assert not re.search(r"\b(use|run with|reduce to) fewer gpus\b", text), fid


def test_severities_chosen_for_the_field(rules):
    sev = {fid: e["severity"] for fid, e in rules.findings.items()}
    assert sev["destroy-process-group-missing"] == "info"
    assert sev["nccl-tuning-before-profiling"] == "warning"
    assert sev["network-unreachable"] == "error"
    assert "collective-timeout" in rules.findings["network-unreachable"]["explains"]
    assert "out-of-memory" in rules.findings["missing-set-device"]["explains"]
    assert "nccl-error" in rules.findings["ddp-before-to-device"]["explains"]


@pytest.mark.parametrize("fid", ["nccl-tuning-before-profiling", "communication-bound"])
def test_nccl_tuning_advice_is_gated_on_a_profiled_step(rules, fid):
    gate = rules.findings[fid]["gate"]
    assert ("trainstep.comm_exposed_fraction", gate["when"].line) in list(conditions.facts_read(gate["when"]))
    hit = Facts.from_dict({f"scan.{fid}": [{"detail": "NCCL_ALGO=Tree", "path": "train.sh", "line": 3}]}, "scan")
    [finding] = evaluate(rules, Observations(facts=hit))
    assert finding.gate_unmet and finding.fix.startswith("Not yet:") and finding.commands == []
    measured = Facts.from_dict({f"scan.{fid}": [{"detail": "x"}], "trainstep.comm_exposed_fraction": 0.42}, "t")
    [finding] = evaluate(rules, Observations(facts=measured))
    assert finding.gate_unmet is None and "42%" in finding.fix


def test_root_cause_orders_first(rules):
    facts = Facts.from_dict({"log.collective-timeout": [{"detail": "Watchdog caught collective operation timeout"}],
                             "log.network-unreachable": [{"detail": "client socket has timed out"}]}, "logs")
    ordered = [f.id for f in evaluate(rules, Observations(facts=facts))]
    assert ordered == ["network-unreachable", "collective-timeout"]



def test_worked_example_of_rules_md(rules):
    """The shm-too-small walk-through in docs/RULES.md holds: title, check evidence, ordering."""
    facts = Facts.from_dict({"system.shm_total_bytes": 64 * 2 ** 20, "system.shm_free_bytes": 60 * 2 ** 20}, "system")
    facts = facts.with_facts(Facts.from_dict(
        {"log.nccl-error": [{"detail": "unhandled system error", "line": 9}]}, "logs").records())
    findings = evaluate(rules, Observations(facts=facts))
    assert [f.id for f in findings][:2] == ["shm-too-small", "nccl-error"]
    shm = findings[0]
    assert shm.title == "/dev/shm is too small (64 MiB) for DataLoader workers and NCCL"
    assert any("64.0 MiB" in ev.detail for ev in shm.evidence)
    assert shm.commands == ["df -h /dev/shm"] and "--shm-size" in shm.fix

# ---- tables and checklists -----------------------------------------------------------------


def test_pitfall_table_has_exactly_the_twenty(rules):
    assert [p["id"] for p in rules.pitfalls] == list(PITFALL_IDS)
    assert [p["number"] for p in rules.pitfalls] == list(range(1, 21))
    for row in rules.pitfalls:
        assert row["priority"] in ("High", "Medium", "Low")
        assert row["priority"] == rules.findings[row["id"]]["priority"], row["id"]
        assert row["references"] and row["detected_by"]


def test_pitfall_detections_exist(rules, registry):
    """Every detected_by entry names a scanner/log hit list, probe, fact, check or tree that exists."""
    specs = all_fact_specs(rules, registry)
    for row in rules.pitfalls:
        for source in row["detected_by"]:
            kind, _, name = source.partition(":")
            known = {"scan": lambda n: f"scan.{n}" in specs, "log": lambda n: f"log.{n}" in specs,
                     "fact": lambda n: n in specs, "probe": lambda n: n in registry.probes,
                     "check": lambda n: n in rules.checks, "tree": lambda n: n in rules.trees}
            assert kind in known and known[kind](name), (row["id"], source)
            if kind in ("scan", "log"):
                assert name == row["id"], (row["id"], source)
            if kind == "check":
                assert rules.checks[name]["finding"] == row["id"], (row["id"], source)


def test_rules_check_passes_on_the_shipped_base(rules, registry):
    """Every fact and probe read by findings, trees and checklists is declared (troubleshoot rules check)."""
    assert [f"{i.path}:{i.line}: {i.message}" for i in check_rules(rules, registry)] == []


def test_red_flags_cover_five_groups(rules):
    checklist = rules.checklists["red-flags"]
    assert checklist["kind"] == "red-flags"
    groups = {g["id"]: g["items"] for g in checklist["groups"]}
    assert set(groups) == {"setup", "synchronization", "performance", "debugging", "multi-node"}
    assert sum(map(len, groups.values())) >= 30
    for items in groups.values():
        for item in items:
            assert item["wrong"] and item["right"] and item["finding"] in rules.findings


def test_multi_node_procedure_steps(rules):
    checklist = rules.checklists["multi-node"]
    assert checklist["kind"] == "procedure"
    steps = [item for g in checklist["groups"] for item in g["items"]]
    assert len(steps) >= 8
    assert all(item["step"] and item["minutes"] > 0 and item.get("commands") for item in steps)
    text = " ".join(item["step"] for item in steps).lower()
    for topic in ("master_addr", "interface", "gloo", "nccl", "bandwidth"):
        assert topic in text, topic


def test_rationalizations(rules, registry):
    assert len(rules.rationalizations) >= 12
    for row in rules.rationalizations.values():
        for fid in row.get("applies_to") or []:
            assert fid in rules.findings, (row["id"], fid)
        assert row.get("verify_probe", "launcher") in registry.probes, row["id"]
    assert "use-fewer-gpus" in rules.rationalizations


def test_expectations_table(rules):
    links = rules.expectations["links"]
    assert len({link["id"] for link in links}) == len(links)
    for link in links:
        assert link["backend"] in ("nccl", "gloo") and link["source"]
        if link["slow_below_gbps"] is not None:
            assert 0 < link["slow_below_gbps"] < link["expected_busbw_gbps"]
    loopback = next(link for link in links if link["id"] == "gloo-loopback")
    assert loopback["slow_below_gbps"] is None


# ---- decision trees ------------------------------------------------------------------------


def _satisfy(cond) -> tuple[dict, set] | None:
    """(facts, findings) that make a (simple) condition True, or None when none are derived here."""
    if "all" in cond:
        facts: dict = {}
        found: set = set()
        for item in cond["all"]:
            part = _satisfy(item)
            if part is None:
                return None
            facts.update(part[0])
            found |= part[1]
        return facts, found
    if "any" in cond:
        return _satisfy(cond["any"][0])
    if "finding" in cond:
        return {}, {cond["finding"]}
    if "not" in cond:
        return None
    key, op, value = cond["fact"], cond["op"], cond.get("value")
    if "ref" in cond:
        pairs = {"gt": (2, 1), "ge": (1, 1), "lt": (1, 2), "le": (1, 1), "equals": (1, 1), "not_equals": (1, 2)}
        a, b = pairs[op]
        return {key: a, cond["ref"]: b}, set()
    simple = {"exists": "x", "is_true": True, "is_false": False, "nonempty": ["x"], "empty": []}
    if op in simple:
        return {key: simple[op]}, set()
    if op in ("equals", "ge", "le", "contains"):
        return {key: [value] if op == "contains" else value}, set()
    if op == "in":
        return {key: value[0]}, set()
    if op in ("gt", "lt"):
        return {key: value + (1 if op == "gt" else -1)}, set()
    if op == "matches":
        literal = re.sub(r"[\^$]", "", value)
        return ({key: literal}, set()) if re.search(value, literal) else None
    return None


def _explore(tree: dict) -> tuple[set[str], list[str]]:
    """Walk every answer and every probe outcome; return concluded node ids and problems."""
    reached: set[str] = set()
    problems: list[str] = []
    todo: list[tuple[dict, frozenset]] = [({}, frozenset())]
    for node in tree["nodes"].values():  # branch nodes read facts gathered elsewhere (scan, earlier probes)
        if "branch" in node:
            todo += [(got[0], frozenset(got[1])) for b in node.get("then") or []
                     if (got := _satisfy(b["when"])) is not None]
    seen: set[tuple] = set()
    while todo:
        facts, found = todo.pop()
        sig = (tuple(sorted((k, repr(v)) for k, v in facts.items())), found)
        if sig in seen:
            continue
        seen.add(sig)
        state = walk(tree, facts, found)
        node = state.node
        if len(state.path) > len(tree["nodes"]):
            problems.append(f"path too long: {state.path}")
            continue
        if state.kind == "ask":
            if answer_key(state.node_id) in facts:
                problems.append(f"loop back to answered question {state.node_id}: {state.path}")
                continue
            for answer in node["answers"]:
                todo.append(({**facts, answer_key(state.node_id): answer}, found))
        elif state.kind == "probe":
            ran = {probe_ran_key(p): "ok" for p in state.probes}
            todo.append(({**facts, **ran}, found))
            for branch in node.get("then") or []:
                got = _satisfy(branch["when"])
                if got is None:
                    problems.append(f"cannot derive facts for {state.node_id} -> {branch['goto']}")
                else:
                    todo.append(({**facts, **ran, **got[0]}, found | got[1]))
        elif state.kind in ("needs-evidence", "blocked"):
            req = node["requires"]
            got = _satisfy(req["when"])
            if got is None:
                problems.append(f"cannot satisfy requires of {state.node_id}")
                continue
            ran = {probe_ran_key(req["probe"]): "ok"} if req.get("probe") else {}
            todo.append(({**facts, **got[0], **ran}, found | got[1]))
        else:
            assert state.kind == "conclude"
            if not state.conclusions and node.get("conclude") != "none":
                problems.append(f"{state.node_id} concludes nothing")
            reached.add(state.node_id)
    return reached, problems


def test_the_eight_symptom_trees_exist(rules):
    assert set(TREES) <= set(rules.trees)


@pytest.mark.parametrize("tree_id", TREES)
def test_every_conclusion_is_reachable_by_walking(rules, tree_id):
    tree = rules.trees[tree_id]
    conclusions = {nid for nid, node in tree["nodes"].items() if "conclude" in node}
    reached, problems = _explore(tree)
    assert problems == []
    assert sorted(conclusions - reached) == []


@pytest.mark.parametrize("tree_id", TREES)
def test_tree_nodes_are_explained(rules, tree_id):
    for node_id, node in rules.trees[tree_id]["nodes"].items():
        if "ask" in node:
            assert len(node["answers"]) >= 2, node_id
            assert all(isinstance(a, str) for a in node["answers"])
        if "conclude" in node:
            assert node.get("summary"), node_id


def test_trees_counter_skipped_steps(rules):
    used = {c for t in rules.trees.values() for n in t["nodes"].values() for c in n.get("counters") or []}
    assert {"skip-profiling", "use-fewer-gpus", "works-on-one-node", "hang-is-random"} <= used


def test_communication_bound_conclusions_require_the_trainstep_probe(rules):
    for tree in rules.trees.values():
        for node_id, node in tree["nodes"].items():
            concl = node.get("conclude")
            concl = [concl] if isinstance(concl, str) else list(concl or [])
            if "communication-bound" in concl:
                assert node["requires"]["probe"] == "trainstep", (tree["id"], node_id)



def test_communication_bound_waits_for_the_measurement(rules):
    tree = rules.trees["slow-training"]
    answers = {"ask-dataparallel": "no", "ask-measured": "yes, N GPUs give less than 85% of N times one GPU",
               "ask-accumulation": "no", "ask-find-unused": "no",
               "ask-profile": "communication not overlapped with compute", "ask-nccl-vars": "no",
               "ask-transport": "yes"}
    facts = {answer_key(k): v for k, v in answers.items()}
    facts[probe_ran_key("system")] = "ok"
    state = walk(tree, facts)
    assert (state.node_id, state.kind, state.probes) == ("c-comm-bound", "needs-evidence", ["trainstep"])
    facts[probe_ran_key("trainstep")] = "ok"
    assert walk(tree, facts).kind == "blocked"  # profiled, but communication does not dominate
    state = walk(tree, facts, frozenset({"communication-bound"}))
    assert state.kind == "conclude" and state.conclusions == ["communication-bound"]

def test_multi_node_tree_walks_to_a_diagnosis_by_answers_only(rules):
    tree = rules.trees["multi-node-fails"]
    answers = {
        "ask-symptom": "it hangs at start, then 'client socket has timed out' or a store-based barrier timeout",
        "ask-connect": "no",
        "ask-resolve": "yes",
    }
    state = walk(tree, {answer_key(k): v for k, v in answers.items()})
    assert state.kind == "conclude" and state.conclusions[0] == "network-unreachable"


def test_multi_node_tree_uses_the_network_probe(rules):
    tree = rules.trees["multi-node-fails"]
    facts = {answer_key("ask-symptom"): next(iter(tree["nodes"]["ask-symptom"]["answers"])),
             answer_key("ask-connect"): "check from here"}
    assert walk(tree, facts).probes == ["network"]
    facts[probe_ran_key("network")] = "ok"
    facts["net.master_resolvable"] = False
    assert walk(tree, facts).conclusions[0] == "master-addr-unresolvable"
    facts["net.master_resolvable"], facts["net.master_reachable"] = True, False
    assert walk(tree, facts).conclusions[0] == "network-unreachable"


# ---- docs/RULES.md tables ------------------------------------------------------------------

DOC = REPO / "docs" / "RULES.md"
BEGIN, END = "<!-- BEGIN GENERATED TABLES -->", "<!-- END GENERATED TABLES -->"


def generated_tables(rules) -> str:
    """The reference tables of docs/RULES.md, built from the knowledge base."""
    out = ["### Findings", "", "| code | id | severity | category | priority | explains |", "|---|---|---|---|---|---|"]
    for entry in sorted(rules.findings.values(), key=lambda e: e["code"]):
        explains = ", ".join(entry.get("explains") or [])
        out.append(f"| {entry['code']} | `{entry['id']}` | {entry['severity']} | {entry['category']} "
                   f"| {entry['priority']} | {explains} |")
    out += ["", "### The 20 pitfalls", "", "| # | pitfall | id | priority | detected by |", "|---|---|---|---|---|"]
    for row in rules.pitfalls:
        out.append(f"| {row['number']} | {row['name']} | `{row['id']}` | {row['priority']} "
                   f"| {', '.join(row['detected_by'])} |")
    out += ["", "### Decision trees", "", "| tree | symptom | questions | probes | conclusions |", "|---|---|---|---|---|"]
    for tree in sorted(rules.trees.values(), key=lambda t: t.get("order", 99)):
        nodes = tree["nodes"].values()
        probes = sorted({p for n in nodes for p in ([n["probe"]] if isinstance(n.get("probe"), str)
                                                      else n.get("probe") or [])})
        out.append(f"| `{tree['id']}` | {tree['symptom']} | {sum('ask' in n for n in nodes)} "
                   f"| {', '.join(probes) or '-'} | {sum('conclude' in n for n in nodes)} |")
    out += ["", "### Rationalizations", "", "| id | excuse |", "|---|---|"]
    for row in rules.rationalizations.values():
        out.append(f"| `{row['id']}` | {row['excuse']} |")
    return "\n".join(out)


def test_rules_md_tables_are_current(rules):
    text = DOC.read_text(encoding="utf-8")
    current = text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip()
    assert current == generated_tables(rules), "regenerate with: python tests/rules/test_knowledge_base.py"


if __name__ == "__main__":  # regenerate the tables of docs/RULES.md
    text = DOC.read_text(encoding="utf-8")
    head, tail = text[:text.index(BEGIN) + len(BEGIN)], text[text.index(END):]
    DOC.write_text(f"{head}\n{generated_tables(load_rules(base=REPO / 'rules'))}\n{tail}", encoding="utf-8")
