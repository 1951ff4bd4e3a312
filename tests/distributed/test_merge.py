"""Rank 0's merge of payloads: cross-rank facts become the right findings, tables cover every rank."""

from __future__ import annotations

import pytest

from troubleshooter.distributed.merge import JobSession, build_session
from troubleshooter.core.ruleset import load_rules


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def payload(rank: int, host: str = "n0", local_rank: int | None = None, torch: str = "2.13.0", world: int = 2,
            port: int = 29500, env: dict | None = None, node_results: list | None = None, done: bool = True,
            local_step: float | None = None) -> dict:
    results = [{"name": "launcher", "status": "ok", "rank": rank, "host": host, "duration_s": 0.01, "facts": {}}]
    if local_step is not None:
        results.append({"name": "trainstep", "status": "ok", "rank": rank, "host": host, "duration_s": 1.0,
                        "facts": {"trainstep.local_p50_s": local_step}})
    return {"rank": rank, "host": host, "pid": 1,
            "identity": {"world_size": world, "local_rank": rank if local_rank is None else local_rank,
                         "master_addr": "10.0.0.1", "master_port": port},
            "env": env or {}, "versions": {"python": "3.11.7", "torch": torch, "cuda": "none"},
            "results": results, "node_results": node_results or [], "backend": "gloo", "device": "cpu",
            "joined": True, "init_s": 0.5, "join_duration_s": 0.5, "done": done, "phases": [], "finished": [],
            "stuck": None, "world_facts": {}, "exit_code": 0, "log_tail": ""}


def report(rules, payloads: dict, world: int = 2, claims: dict | None = None) -> dict:
    session = JobSession(rules, "auto")
    build_session(session, payloads, claims or {r: 1 for r in payloads}, world, "torchrun")
    return session.report()


def ids(doc: dict) -> set[str]:
    return {f["id"] for f in doc["findings"]}


def test_consistent_ranks_raise_no_cross_rank_finding(rules):
    doc = report(rules, {0: payload(0), 1: payload(1)})
    assert not ids(doc) & {"version-mismatch-across-ranks", "rank-env-inconsistent", "ranks-missing-at-rendezvous"}
    assert [row["rank"] for row in doc["rank_table"]] == [0, 1]
    assert doc["facts"]["ranks.torch_versions"] == {"2.13.0": [0, 1]}


def test_different_torch_on_one_rank_is_a_version_mismatch(rules):
    doc = report(rules, {0: payload(0), 1: payload(1, torch="2.1.0")})
    finding = next(f for f in doc["findings"] if f["id"] == "version-mismatch-across-ranks")
    assert "2.1.0 on rank 1" in finding["evidence"][0]["detail"]


def test_world_size_and_port_disagreement_is_rank_env_inconsistent(rules):
    doc = report(rules, {0: payload(0), 1: payload(1, world=3, port=29501)})
    details = " | ".join(e["detail"] for f in doc["findings"] if f["id"] == "rank-env-inconsistent"
                         for e in f["evidence"])
    assert "world size differs: 2 on ranks 0; 3 on ranks 1" in details
    assert "MASTER_PORT differs: 29500 on ranks 0; 29501 on ranks 1" in details


def test_protocol_settings_must_agree_but_interface_names_may_differ(rules):
    quiet = report(rules, {0: payload(0, env={"NCCL_SOCKET_IFNAME": "eth0"}),
                           1: payload(1, env={"NCCL_SOCKET_IFNAME": "ens5"})})
    assert "rank-env-inconsistent" not in ids(quiet)
    loud = report(rules, {0: payload(0, env={"NCCL_PROTO": "Simple"}), 1: payload(1)})
    assert "rank-env-inconsistent" in ids(loud)
    assert loud["facts"]["ranks.env_values"] == {"NCCL_PROTO": {"Simple": [0], "<unset>": [1]}}


def test_rank_that_never_checked_in_is_named(rules):
    doc = report(rules, {0: payload(0)}, world=3, claims={0: 1, 2: 1})
    assert doc["facts"]["world.missing_ranks"] == [1]
    assert doc["facts"]["ranks.undelivered"] == [2]
    assert "ranks-missing-at-rendezvous" in ids(doc)


def test_two_processes_claiming_one_rank(rules):
    doc = report(rules, {0: payload(0), 1: payload(1)}, claims={0: 1, 1: 2})
    finding = next(f for f in doc["findings"] if f["id"] == "rank-env-inconsistent")
    assert finding["evidence"][0]["detail"] == "rank 1 claimed by more than one process"


def test_node_facts_reach_every_rank_of_their_node_only(rules):
    shm = {"name": "system", "status": "ok", "rank": None, "host": "n1", "duration_s": 0.1,
           "facts": {"system.shm_present": False}}
    doc = report(rules, {0: payload(0, "n0", 0), 1: payload(1, "n0", 1), 2: payload(2, "n1", 0, node_results=[shm]),
                         3: payload(3, "n1", 1)}, world=4)
    finding = next(f for f in doc["findings"] if f["id"] == "shm-too-small")
    assert sorted(e["rank"] for e in finding["evidence"]) == [2, 3]
    assert [n["ranks"] for n in doc["nodes"]] == [[0, 1], [2, 3]]


def test_slow_node_is_a_straggler(rules):
    doc = report(rules, {0: payload(0, "n0", 0, local_step=0.10), 1: payload(1, "n1", 0, local_step=0.10),
                         2: payload(2, "n2", 0, local_step=0.20)}, world=3)
    finding = next(f for f in doc["findings"] if f["id"] == "straggler-rank")
    assert [e["rank"] for e in finding["evidence"]] == [2]
    assert "2.00x slower than the median node (slowest: n2)" in finding["evidence"][0]["detail"]
    assert doc["facts"]["nodes.slowest_host"] == "n2"
