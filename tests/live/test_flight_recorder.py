"""Flight recorder: variable names per torch version, the restricted unpickler, dump analysis."""

from __future__ import annotations

import os
import pickle

import pytest

from troubleshooter.live import flight_recorder as fr


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_malicious_pickle_is_rejected_and_nothing_runs(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "nccl_trace_rank_0"
    path.write_bytes(pickle.dumps({"version": "2.10", "entries": [_Evil(marker)]}))
    with pytest.raises(fr.DumpError, match="refused to load (posix|os).system"):
        fr.load_dump(path)
    assert not marker.exists()
    facts, problems = fr.read_dumps(str(tmp_path / "nccl_trace_rank_"))
    assert list(facts) == [fr.REFUSED] and "refused" in problems[0] and not marker.exists()


def test_plain_containers_load():
    data = {"a": [1, 2.5, None, True], "b": ("x", b"y"), "c": {frozenset({1}), 3}}
    assert fr.safe_loads(pickle.dumps(data)) == data


def test_variable_names_follow_the_torch_version():
    assert fr.fr_names("2.8.1").buffer_size == "TORCH_NCCL_TRACE_BUFFER_SIZE"
    assert fr.fr_names("2.8.1").dump_file == "TORCH_NCCL_DEBUG_INFO_TEMP_FILE"
    assert fr.fr_names("2.9.0").buffer_size == "TORCH_FR_BUFFER_SIZE"
    assert fr.fr_names("2.13.0+cpu").dump_file == "TORCH_FR_DUMP_TEMP_FILE"
    assert fr.fr_names().buffer_size == "TORCH_FR_BUFFER_SIZE"  # the installed torch is 2.13


def test_environment_keeps_what_the_user_set():
    env = fr.fr_environment("/d/p_", {"TORCH_NCCL_TRACE_BUFFER_SIZE": "50"}, "2.13.0")
    assert "TORCH_FR_BUFFER_SIZE" not in env  # the old spelling the user set still counts
    assert env["TORCH_FR_DUMP_TEMP_FILE"] == "/d/p_" and env["TORCH_NCCL_DUMP_ON_TIMEOUT"] == "1"
    assert env["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"] == "/d/p_pipe_"


def _entry(seq, op, sizes=((4,),), state="completed"):
    # the per-entry fields torch/distributed/flight_recorder/components/types.py (Op, Collective) reads
    return {"record_id": seq - 1, "pg_id": 0, "process_group": ("0", "default_pg"), "collective_seq_id": seq,
            "p2p_seq_id": 0, "op_id": seq, "profiling_name": f"nccl:{op}", "time_created_ns": seq,
            "input_sizes": [list(s) for s in sizes], "output_sizes": [list(s) for s in sizes],
            "input_dtypes": ["Float"], "output_dtypes": ["Float"], "state": state, "is_p2p": False,
            "frames": [{"name": "main", "filename": "train.py", "line": 10 + seq}]}


def _dump(rank, entries, completed):
    return {"version": "2.10", "comm_lib_version": "2.21.5",
            "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2]"}},
            "pg_status": {"0": {"last_enqueued_collective": entries[-1]["collective_seq_id"],
                                "last_started_collective": entries[-1]["collective_seq_id"],
                                "last_completed_collective": completed}},
            "entries": entries}


def _write(tmp_path, dumps):
    for rank, dump in dumps.items():
        (tmp_path / f"nccl_trace_rank_{rank}").write_bytes(pickle.dumps(dump))
    return str(tmp_path / "nccl_trace_rank_")


def test_missing_rank_at_first_disagreement(tmp_path):
    full = [_entry(1, "all_reduce"), _entry(2, "broadcast"), _entry(3, "all_reduce", state="scheduled")]
    prefix = _write(tmp_path, {0: _dump(0, full, 2), 1: _dump(1, full[:2], 2), 2: _dump(2, full, 2)})
    facts, problems = fr.read_dumps(prefix)
    assert not problems and facts["live.fr_dumps"] == 3
    first = facts["live.fr_first_mismatch"]
    assert first["seq"] == 3 and first["kind"] == "missing" and first["missing_ranks"] == [1]
    ranks = {r["rank"]: r for r in facts["live.fr_ranks"]}
    assert ranks[0]["last_entered_seq"] == 3 and ranks[0]["last_entered_op"] == "all_reduce"
    assert ranks[1]["last_entered_seq"] == 2 and ranks[1]["last_completed_op"] == "broadcast"
    hit = facts["live.collective-timeout"][0]
    assert hit["rank"] == 1 and "never by rank 1" in hit["detail"]


def test_different_collective_at_same_sequence_number(tmp_path):
    a = [_entry(1, "all_reduce"), _entry(2, "all_reduce", state="started")]
    b = [_entry(1, "all_reduce"), _entry(2, "barrier", sizes=(), state="started")]
    facts, _ = fr.read_dumps(_write(tmp_path, {0: _dump(0, a, 1), 1: _dump(1, b, 1)}))
    first = facts["live.fr_first_mismatch"]
    assert first["seq"] == 2 and first["kind"] == "mismatch"
    assert first["by_rank"]["0"].startswith("all_reduce") and first["by_rank"]["1"].startswith("barrier")
    assert "live.collective-mismatch" in facts


def test_agreeing_dumps_raise_nothing(tmp_path):
    full = [_entry(1, "all_reduce"), _entry(2, "all_reduce")]
    facts, _ = fr.read_dumps(_write(tmp_path, {0: _dump(0, full, 2), 1: _dump(1, full, 2)}))
    assert "live.fr_first_mismatch" not in facts and facts["live.fr_dumps"] == 2


def test_dump_files_are_found_by_prefix(tmp_path):
    for name in ("nccl_trace_rank_0", "nccl_trace_rank_12", "nccl_trace_rank_x", "other_1"):
        (tmp_path / name).write_bytes(b"")
    assert sorted(fr.find_dumps(str(tmp_path / "nccl_trace_rank_"))) == [0, 12]


def test_dumps_older_than_the_job_are_ignored(tmp_path):
    full = [_entry(1, "all_reduce"), _entry(2, "broadcast", state="scheduled")]
    prefix = _write(tmp_path, {0: _dump(0, full, 1), 1: _dump(1, full[:1], 1), 2: _dump(2, full, 1)})
    os.utime(tmp_path / "nccl_trace_rank_1", (1_000_000, 1_000_000))  # left over from an earlier job
    facts, problems = fr.read_dumps(prefix, since=2_000_000)
    assert not problems and facts["live.fr_dumps"] == 2
    assert "live.fr_first_mismatch" not in facts
    assert fr.read_dumps(prefix, since=4e9) == ({}, [])
