"""Flight-recorder dumps are read under budgets; a refused dump is a finding, not a silent drop."""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path

import pytest

from troubleshooter.core.engine import Observations, evaluate
from troubleshooter.core.facts import Facts
from troubleshooter.core.ruleset import load_rules
from troubleshooter.live import flight_recorder as fr


def shared_lists_bomb(levels: int = 31) -> bytes:
    """A few hundred bytes of plain data: each level is a list holding the previous level twice."""
    obj: list = ["A"]
    for _ in range(levels):
        obj = [obj, obj]
    return pickle.dumps({"version": "2.10", "entries": [
        {"collective_seq_id": 0, "profiling_name": "nccl:all_reduce", "input_sizes": obj, "state": "completed"}]})


def deep_chain(levels: int) -> bytes:
    """levels nested empty lists, written opcode by opcode (pickle.dumps itself would recurse)."""
    return b"\x80\x02" + b"]" * levels + b"a" * (levels - 1) + b"."


def test_shared_list_bomb_is_refused_fast(tmp_path: Path) -> None:
    data = shared_lists_bomb()
    assert len(data) < 500
    path = tmp_path / "nccl_trace_rank_0"
    path.write_bytes(data)
    started = time.monotonic()
    with pytest.raises(fr.DumpError, match="expands to more than"):
        fr.load_dump(path)
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize("data, reason", [
    (deep_chain(200_000), "nests deeper than"),
    (b"\x80\x02]q\x00h\x00a.", "refers to itself"),  # a list that contains itself
])
def test_deep_and_cyclic_dumps_are_refused(tmp_path: Path, data: bytes, reason: str) -> None:
    path = tmp_path / "nccl_trace_rank_0"
    path.write_bytes(data)
    with pytest.raises(fr.DumpError, match=reason):
        fr.load_dump(path)


def test_budget_counts_shared_objects_at_every_use() -> None:
    small = fr.Budget(objects=100, depth=10, text_bytes=1000)
    shared = ["x" * 10] * 5
    fr.check_budget([shared] * 3, small)
    with pytest.raises(ValueError):
        fr.check_budget([shared] * 30, small)


class _Evil:
    def __reduce__(self):
        return (os.system, ("true",))


def test_refusals_become_findings_next_to_the_readable_dumps(tmp_path: Path) -> None:
    good = {"version": "2.10", "pg_status": {}, "entries": [
        {"collective_seq_id": 1, "profiling_name": "nccl:all_reduce", "input_sizes": [[4]], "state": "completed",
         "process_group": ("0", "default_pg")}]}
    (tmp_path / "nccl_trace_rank_0").write_bytes(pickle.dumps(good))
    (tmp_path / "nccl_trace_rank_1").write_bytes(shared_lists_bomb())
    (tmp_path / "nccl_trace_rank_2").write_bytes(pickle.dumps({"entries": [_Evil()]}))
    facts, problems = fr.read_dumps(str(tmp_path / "nccl_trace_rank_"))
    assert facts["live.fr_dumps"] == 1 and len(problems) == 2
    findings = evaluate(load_rules(), Observations(Facts.from_dict(facts, "live")))
    refused = [f for f in findings if f.id == "flight-recorder-dump-refused"]
    assert refused and sorted(ev.rank for ev in refused[0].evidence) == [1, 2]
    assert any("expands" in ev.detail for ev in refused[0].evidence)
    assert any("refused to load" in ev.detail for ev in refused[0].evidence)
