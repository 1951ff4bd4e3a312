"""Rank prefixes, timestamps, root-cause ordering across files, and the launcher summaries."""

from __future__ import annotations

import pytest

from troubleshooter.logs import LogAnalyzer, analyze_paths
from troubleshooter.logs.lineprefix import split_prefix

PREFIXES = [
    ("[rank3]:[E1121 23:15:30.123456 12345 ProcessGroupNCCL.cpp:1234] boom", 3, "boom"),
    ("[default1]:RuntimeError: x", 1, "RuntimeError: x"),
    ("2: RuntimeError: y", 2, "RuntimeError: y"),
    ("[1,5]<stderr>:Traceback (most recent call last):", 5, "Traceback (most recent call last):"),
    ("worker-1: [rank9]: z", 9, "z"),
    ("[2024-11-21 23:15:30,123] torch.distributed.run: [WARNING] w", None, "torch.distributed.run: [WARNING] w"),
    ("RuntimeError: no prefix", None, "RuntimeError: no prefix"),
    ("srun: error: node1: task 3: Exited with exit code 1", None, "srun: error: node1: task 3: Exited with exit code 1"),
    ("12:30:01 a clock is not a rank", None, "a clock is not a rank"),  # a time of day is peeled, no rank
]


@pytest.mark.parametrize("line,rank,body", PREFIXES)
def test_split_prefix(line, rank, body):
    parsed = split_prefix(line)
    assert (parsed.rank, parsed.body) == (rank, body)


def test_timestamps_are_parsed():
    assert split_prefix("2024-11-21T23:15:30.5Z x").timestamp == pytest.approx(1732231530.5)
    assert split_prefix("[rank0]:[E1121 23:15:30.000000 1 a.cpp:1] x", year=2024).timestamp == pytest.approx(1732231530.0)


OOM = ("[rank3]:[E1121 23:15:30.000000 7 train.py:1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
       "2.00 GiB. GPU 3 has a total capacity of 79.15 GiB of which 1.12 GiB is free.\n")
TIMEOUT = ("[rank0]:[E1121 23:25:31.000000 4 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation "
           "timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600060 "
           "milliseconds before timing out.\n")
RESET = "[rank0]:[E1121 23:25:31.500000 4 x.cpp:1] torch.distributed.DistNetworkError: Connection reset by peer\n"


@pytest.mark.parametrize("order", [("rank0.log", "rank3.log"), ("rank3.log", "rank0.log")])
def test_root_cause_is_the_crash_not_its_echoes_whatever_the_file_order(tmp_path, rules, order):
    (tmp_path / "rank0.log").write_text(TIMEOUT + RESET)
    (tmp_path / "rank3.log").write_text("[rank3]:starting\n" + OOM)
    facts = analyze_paths([tmp_path / name for name in order], rules).facts
    assert facts["log.root_cause"]["id"] == "out-of-memory"
    assert facts["log.root_cause"]["rank"] == 3
    assert "log.collective-timeout" not in facts and "log.nccl-error" not in facts
    assert {s["id"] for s in facts["log.suppressed"]} == {"collective-timeout", "nccl-error", "network-unreachable"}
    assert facts["log.out-of-memory"][0]["vars"]["device_ordinal"] == 3
    assert facts["log.failed_ranks"] == [3]


def test_timeouts_alone_stay_reported_with_their_vars(rules):
    analyzer = LogAnalyzer(rules)
    hits = analyzer.feed(TIMEOUT)
    assert hits[0]["finding"] == "collective-timeout" and hits[0]["rank"] == 0
    assert hits[0]["vars"] == {"rank": 0, "seq": 9, "op": "ALLREDUCE", "timeout_ms": 600000, "ran_ms": 600060}
    assert analyzer.facts()["log.root_cause"]["id"] == "collective-timeout"


def test_repeated_lines_are_counted_not_stored(rules):
    analyzer = LogAnalyzer(rules)
    for _ in range(1000):
        analyzer.feed(TIMEOUT)
    hits = analyzer.facts()["log.collective-timeout"]
    assert len(hits) == 1 and hits[0]["count"] == 1000 and hits[0]["line"] == 1


def test_refinement_needs_its_context_nearby(rules):
    far = LogAnalyzer(rules)
    far.feed('  File "/x/torch/nn/parallel/distributed.py", line 795, in __init__')
    for _ in range(100):
        far.feed("filler line")
    far.feed("RuntimeError: Tensors must be CUDA and dense")
    assert "log.device-mismatch" in far.facts() and "log.ddp-before-to-device" not in far.facts()
    near = LogAnalyzer(rules)
    near.feed('  File "/x/torch/nn/parallel/distributed.py", line 795, in __init__')
    near.feed("RuntimeError: Tensors must be CUDA and dense")
    assert "log.ddp-before-to-device" in near.facts()


def test_torchrun_summary_names_rank_exit_signal_and_traceback(rules, tmp_path):
    log = tmp_path / "summary.log"
    log.write_text("\n".join([
        "[rank5]: Traceback (most recent call last):",
        "[rank5]: ValueError: bad batch shape",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        "train.py FAILED", "------------------------------------------------------------", "Failures:",
        "[1]:", "  time      : 2024-11-21_08:12:44", "  host      : node-b", "  rank      : 6 (local_rank: 2)",
        "  exitcode  : -15 (pid: 3106)", "  error_file: <N/A>", "  traceback : Signal 15 (SIGTERM) received by PID 3106",
        "------------------------------------------------------------", "Root Cause (first observed failure):",
        "[0]:", "  time      : 2024-11-21_08:12:40", "  host      : node-b", "  rank      : 5 (local_rank: 1)",
        "  exitcode  : 1 (pid: 3105)", "  error_file: <N/A>",
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
        "============================================================", ""]))
    facts = analyze_paths([log], rules).facts
    root = next(f for f in facts["log.failures"] if f.get("root"))
    assert (root["rank"], root["local_rank"], root["host"], root["exit_code"]) == (5, 1, "node-b", 1)
    assert root["traceback"] == "ValueError: bad batch shape"
    other = next(f for f in facts["log.failures"] if not f.get("root"))
    assert other["signal"] == "SIGTERM"
    assert facts["log.exit_codes"] == {"5": 1, "6": -15}
    assert facts["log.root_cause"] == {"id": None, "rank": 5, "local_rank": 1, "host": "node-b", "path": str(log),
                                       "line": 18, "exit_code": 1, "traceback": "ValueError: bad batch shape"}


def test_rank_zero_and_exit_code_zero_are_kept(rules):
    analyzer = LogAnalyzer(rules)
    for line in ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "=" * 60,
                 "Root Cause (first observed failure):", "[0]:", "  time      : 2025-05-21_15:43:03",
                 "  host      : worker-0", "  rank      : 0 (local_rank: 0)", "  exitcode  : -9 (pid: 14750)",
                 "  error_file: <N/A>", "  traceback : Signal 9 (SIGKILL) received by PID 14750", "=" * 60]:
        analyzer.feed(line)
    facts = analyzer.facts()
    assert facts["log.exit_codes"] == {"0": -9}
    assert facts["log.failures"][0]["local_rank"] == 0
    assert facts["log.out-of-memory"][0]["vars"]["signal"] == "SIGKILL"
    assert facts["log.root_cause"]["rank"] == 0


def test_slurm_and_mpi_exits(rules):
    analyzer = LogAnalyzer(rules)
    analyzer.feed("srun: error: gpu-3: task 7: Exited with exit code 2")
    analyzer.feed("mpirun noticed that process rank 2 with PID 44 on node w1 exited on signal 11 (Segmentation fault).")
    facts = analyzer.facts()
    assert facts["log.exit_codes"] == {"7": 2, "2": -11}
    assert facts["log.failed_ranks"] == [2, 7]


def test_nccl_info_facts(rules):
    analyzer = LogAnalyzer(rules)
    for line in ["h:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1", "h:1:1 [0] NCCL INFO NET/Socket : Using [0]ens5:10.0.0.5<0>",
                 "h:1:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read",
                 "h:1:9 [0] NCCL INFO Channel 01/0 : 1[1] -> 2[0] [send] via NET/Socket/0",
                 "h:1:9 [0] NCCL INFO Channel 01/0 : 1[1] -> 2[0] [send] via NET/Socket/1",
                 "h2:2:2 [0] NCCL INFO NCCL version 2.19.3+cuda12.2"]:
        analyzer.feed(line)
    facts = analyzer.facts()
    assert facts["log.nccl_version"] == "2.18.1"
    assert facts["log.nccl_versions"] == ["2.18.1", "2.19.3"]
    assert facts["log.nccl_interfaces"] == ["ens5"]
    assert facts["log.nccl_transports"] == ["P2P/IPC", "NET/Socket"]


def test_gz_and_long_lines(rules, tmp_path):
    import gzip

    path = tmp_path / "big.log.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("x" * (3 << 20) + "\n")  # a 3 MB "line" (a progress bar without newlines)
        fh.write("RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.\n")
    facts = analyze_paths([path], rules).facts
    assert facts["log.process-group-not-initialized"][0]["line"] == 2
    assert facts["log.lines"] == 2


@pytest.mark.slow
def test_memory_stays_flat_on_a_large_log(rules, tmp_path):
    import tracemalloc

    path = tmp_path / "large.log"
    block = "".join(f"h:1:1 [0] NCCL INFO Channel {i % 32:02d}/0 : 0[0] -> 1[1] via P2P/IPC/read\n" for i in range(1000))
    block += TIMEOUT + RESET + "step 1 | loss 2.0\n" * 500
    with open(path, "w") as fh:
        for _ in range(300):  # ~30 MB
            fh.write(block)
    tracemalloc.start()
    facts = analyze_paths([path], rules).facts
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert facts["log.lines"] == 300 * 1502
    assert peak < 40 << 20  # chunk buffers only, independent of the log's size


def test_openmpi_first_failed_process_block(rules, tmp_path):
    log = tmp_path / "mpi.log"
    log.write_text("\n".join([
        "[1,0]<stdout>:step 10", "-" * 74,
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
        "the job to be terminated. The first process to do so was:", "",
        "  Process name: [[48123,1],3]", "  Exit code:    2", "-" * 74, ""]))
    facts = analyze_paths([log], rules).facts
    assert facts["log.exit_codes"] == {"3": 2}
    assert facts["log.failures"][0]["launcher"] == "mpirun"
