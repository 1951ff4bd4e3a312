"""The signature library: well-formed, every example matched, every field-notes message covered."""

from __future__ import annotations

import pytest

from troubleshooter.logs import LogAnalyzer
from troubleshooter.logs import prefilter as prefilter_module
from troubleshooter.logs.prefilter import Prefilter, required_literals
from troubleshooter.logs.signatures import check_references, compile_signatures, validate_signature_file
from troubleshooter.core.paths import rules_dir
from troubleshooter.core.yamlspan import load_file, load_text

# field-notes.md §3: the exact text of each row (those that print one) -> the finding it must raise.
FIELD_NOTES_ROWS = [
    (1, "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss.", "unused-parameters-error"),
    (2, "RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter outside the `forward` function.", "gradient-checkpointing-conflict"),
    (3, "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.", "collective-timeout"),
    # secondary to #3 or an async NCCL error, which outrank it (echo, generic); alone it is still a failed run
    (4, "Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.", "collective-timeout"),
    (5, "Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.", "flight-recorder-disabled"),
    (6, "RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).", "master-port-in-use"),
    (6, "RuntimeError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use", "master-port-in-use"),
    (7, "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect to (172.17.0.9, 46229).", "network-unreachable"),
    (7, "TimeoutError: The client socket has timed out after 1800s while trying to connect to (127.0.0.1, 48391).", "network-unreachable"),
    (8, "[W socket.cpp:697] [c10d] The client socket has failed to connect to [::ffff:0.104.99.143]:47389 (errno: 110 - Connection timed out).", "network-unreachable"),
    (9, "torch.distributed.DistNetworkError: Connection reset by peer", "nccl-error"),
    (10, "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [18.25.6.30]:28048", "nccl-error"),
    (11, "Warning: Unable to resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME.", "wrong-network-interface"),
    (11, "Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error", "wrong-network-interface"),
    (12, "RuntimeError: [enforce fail at .../gloo/transport/tcp/device.cc:84] ifa != nullptr. Unable to find address for: ^lo", "wrong-network-interface"),
    (13, "NCCL WARN Bootstrap : no socket interface found", "wrong-network-interface"),
    (14, "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1", "shm-too-small"),
    (14, "NCCL WARN Call to shm_open failed : Permission denied", "shm-too-small"),
    (15, "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.", "nccl-error"),
    (15, "Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000", "missing-set-device"),
    (16, "RuntimeError: CUDA error: invalid device ordinal", "local-rank-exceeds-devices"),
    (17, "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1347, remote process exited or there was a network error, NCCL version 2.18.5", "nccl-error"),
    (17, "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.", "nccl-error"),
    (18, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", None),
    (19, "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 27657) of binary: /usr/bin/python3", "out-of-memory"),
    (20, "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).", "shm-too-small"),
    (20, "RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error.", "shm-too-small"),
    (21, "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set", "launcher-env-missing"),
    (22, "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.", "process-group-not-initialized"),
    (23, "RuntimeError: Distributed package doesn't have NCCL built in", "backend-unavailable"),
    (24, "RuntimeError: Tensors must be CUDA and dense", "device-mismatch"),
    (25, "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [1, 32]] is at version 3; expected version 2 instead.", "broadcast-buffers-inplace"),
    (26, "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:10:00)", "ranks-missing-at-rendezvous"),
    (27, "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=21, OpType=BROADCAST, TensorShape=[1]", "collective-mismatch"),
    (28, "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 8 != 2 * 1 * 1", "batch-size-mismatch"),
    (29, "Rank 1 failed to pass monitoredBarrier in 2000 ms", "collective-timeout"),
]
# Rows 30 (a silent hang) and 31 (a memory symptom) print no message a log could show.


def _signature_files():
    return sorted((rules_dir() / "signatures").glob("*.yaml"))


@pytest.mark.parametrize("path", _signature_files(), ids=lambda p: p.name)
def test_shipped_signature_files_are_valid(path, rules):
    assert list(validate_signature_file(load_file(path), known_findings=rules.findings)) == []


def test_signature_references_resolve(rules):
    assert check_references(rules.signatures, rules.findings) == []


def test_every_finding_signature_has_an_example(rules):
    missing = [s["id"] for s in rules.signatures if (s.get("finding") or s.get("fact")) and not s.get("examples")
               and s["id"] != "nccl-versions"]
    assert missing == []


@pytest.mark.parametrize("row,message,finding", FIELD_NOTES_ROWS, ids=[f"row{r[0]}-{i}" for i, r in enumerate(FIELD_NOTES_ROWS)])
def test_field_notes_message(row, message, finding, rules):
    analyzer = LogAnalyzer(rules)
    hits = analyzer.feed(message)
    if finding is None:  # recognised (context or launcher structure), raises nothing by itself
        assert hits == []
    else:
        assert finding in [h["finding"] for h in hits]
        assert f"log.{finding}" in analyzer.facts()


def test_every_example_line_is_found_by_the_prefilter(rules):
    """The fast path must never skip a line its own signatures match."""
    by_id = {sig["id"]: sig for sig in rules.signatures}
    for sig in rules.signatures:
        for example in sig.get("examples") or []:
            analyzer = LogAnalyzer(rules)
            if sig.get("alone") is False:  # evidence only after a context line: give it its first refinement's
                analyzer.feed(by_id[sig["refine"][0]["after"]]["examples"][0])
            analyzer.feed(example)
            facts = analyzer.facts()
            if sig.get("finding"):
                targets = {sig["finding"], *(r["finding"] for r in sig.get("refine") or [])}
                found = any(f"log.{t}" in facts for t in targets)
                found = found or any(s["id"] in targets for s in facts.get("log.suppressed", []))
                assert found, (sig["id"], example)
            elif sig.get("fact"):
                assert sig["fact"] in facts, (sig["id"], example)
            elif sig.get("failure"):  # a failure naming no cause ends a run: the run is not clean
                analyzer = LogAnalyzer(rules)
                for line in ("epoch 1 step 1 loss 2.31", "epoch 1 step 2 loss 2.12", example):
                    analyzer.feed(line)
                assert "log.root_cause" in analyzer.facts(), (sig["id"], example)
            elif sig.get("wrapper"):
                raw = example.encode()
                flagged = analyzer._confirmed(raw, analyzer.prefilter.line_payloads(raw))
                assert any(analyzer.signatures[i].id == sig["id"] for i in flagged), (sig["id"], example)
            else:
                assert sig["id"] in analyzer._contexts, (sig["id"], example)


def test_required_literals():
    assert required_literals(r"EADDR(IN)USE") == ["EADDRINUSE"]
    assert required_literals(r"Address already in use|EADDRINUSE") == ["Address already in use", "EADDRINUSE"]
    assert required_literals(r"(?:Rank (?P<r>\d+)\] )?Watchdog caught") == ["Watchdog caught"]
    assert required_literals(r"\d+ms|x") is None
    assert required_literals(r"a(b|c)d") is None


ENGINES = ["stdlib"] + (["re2"] if prefilter_module.re2 is not None else [])


@pytest.mark.parametrize("engine", ENGINES)
def test_prefilter_reports_overlapping_and_prefix_anchors(engine):
    pf = Prefilter({"Watch": [0], "Watchdog caught": [1], "dog": [2], "xyz": [3]}, engine=engine)
    found = pf.candidates(b"nothing here\nthe Watchdog caught it\nxyz\n")
    assert found == ({13: {0, 1, 2}, 36: {3}}, set())


@pytest.mark.parametrize("engine", ENGINES)
def test_prefilter_keeps_a_presence_anchor_that_a_line_anchor_extends(engine):
    pf = Prefilter({"Bus error here": [0]}, {"Bus err": [1]}, engine=engine)  # both start at the same byte
    assert pf.candidates(b"nothing\nBus error here\n") == ({8: {0}}, {1})
    assert pf.line_payloads(b"Bus error here") == {0, 1}


@pytest.mark.parametrize("engine", ENGINES)
def test_prefilter_finds_anchors_with_any_bytes_and_overlaps(engine):
    anchors = {"a.b*c": [0], "██|": [1], "aa": [2], "(x)": [3]}
    chunk = "a.b*c\nab*c\n██| 3/10\naaa\n(x)(x)\n[x]\n".encode()
    found, _ = Prefilter(anchors, engine=engine).candidates(chunk)
    confirmed = {start: {p for p in payloads if any(lit.encode() in chunk[start:chunk.index(b"\n", start)]
                                                     for lit, ps in anchors.items() if p in ps)}
                 for start, payloads in found.items()}
    lines = {chunk[start:chunk.index(b"\n", start)]: hits for start, hits in confirmed.items() if hits}
    assert lines == {b"a.b*c": {0}, "██| 3/10".encode(): {1}, b"aaa": {2}, b"(x)(x)": {3}}


def test_both_engines_flag_the_same_lines_of_the_example_corpus(rules):
    """The RE2 scan and the stdlib scan are interchangeable: same confirmed lines, same presence."""
    if len(ENGINES) < 2:
        pytest.skip("google-re2 is not installed")
    data = ("\n".join(example for sig in rules.signatures for example in sig.get("examples") or []) + "\n").encode()
    lines, presence = [], []
    for engine in ENGINES:
        analyzer = LogAnalyzer(rules, engine=engine)
        found, present = analyzer.prefilter.candidates(data)
        confirmed = {start: analyzer._confirmed(data[start:data.index(b"\n", start)], payloads)
                     for start, payloads in found.items()}
        lines.append({start: hits for start, hits in confirmed.items() if hits})
        presence.append(present)
    assert lines[0] == lines[1] and len(lines[0]) > 100
    occurring = {i for i, sig in enumerate(analyzer.signatures) if sig.fact and any(a.encode() in data for a in sig.anchors)}
    assert presence[1] == occurring <= presence[0]  # RE2 reports exactly; stdlib pieces may add false presences


BAD_FILES = [
    ("group: g\nsignatures:\n  - id: a\n    pattern: '(unclosed'\n    note: n\n    finding: nccl-error\n    priority: 1\n",
     4, "pattern does not compile"),
    ("group: g\nsignatures:\n  - id: a\n    pattern: 'Watchdog'\n    note: n\n    finding: no-such-id\n    priority: 1\n",
     6, "unknown finding id 'no-such-id'"),
    ("group: g\nsignatures:\n  - id: a\n    pattern: 'Watchdog'\n    note: n\n    finding: nccl-error\n",
     3, "missing required key 'priority'"),
    ("group: g\nsignatures:\n  - id: a\n    pattern: '\\d+'\n    note: n\n    context: true\n",
     4, "no literal text"),
    ("group: g\nsignatures:\n  - id: a\n    pattern: 'Watchdog'\n    note: n\n    finding: nccl-error\n    priority: 1\n    examples: ['watchdog']\n",
     8, "example 0 does not match"),
    ("group: g\nsignatures:\n  - id: a\n    pattern: 'Watchdog (?P<x>\\d+)'\n    note: n\n    fact: log.nccl_version\n",
     4, "captures exactly one group, named 'value'"),
    ("group: g\nsignatures:\n  - id: a\n    pattern: 'Watchdog'\n    note: n\n    finding: nccl-error\n    priority: 1\n    prio: 3\n",
     8, "unknown key 'prio'"),
    ("group: g\nsignatures:\n  - id: a\n    pattern: 'Watchdog'\n    note: n\n    finding: nccl-error\n    fact: log.x\n    priority: 1\n",
     3, "exactly one of finding, fact, context"),
]


@pytest.mark.parametrize("text,line,message", BAD_FILES, ids=[b[2] for b in BAD_FILES])
def test_bad_signature_files_are_reported_with_a_line(text, line, message, rules):
    problems = list(validate_signature_file(load_text(text), known_findings=rules.findings))
    assert any(p[0] == line and message in p[1] for p in problems), problems


def test_compile_keeps_file_order_and_types(rules):
    sigs = compile_signatures(rules.signatures)
    assert [s.id for s in sigs] == [s["id"] for s in rules.signatures]
    oom = next(s for s in sigs if s.id == "cuda-oom")
    match = oom.regex.search("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB")
    assert oom.extract(match)["device_ordinal"] == 3


def test_library_check_wants_examples_that_still_match_and_known_ids():
    from troubleshooter.logs.signatures import check_references

    sigs = [{"id": "a", "pattern": "boom happened", "finding": "nccl-error", "examples": ["boom happened here"]},
            {"id": "b", "pattern": "other thing", "finding": "no-such-id", "examples": ["unrelated line"]},
            {"id": "c", "pattern": "third one", "context": True}]
    messages = [m for _, _, m in check_references(sigs, ["nccl-error"])]
    assert any("'b': unknown finding id 'no-such-id'" in m for m in messages)
    assert any("'b': example 'unrelated line' no longer matches" in m for m in messages)
    assert any("'c' has no examples" in m for m in messages)
    assert not any("'a'" in m for m in messages)


@pytest.mark.parametrize("engine", ENGINES)
def test_prefilter_finds_everything_past_the_first_window_once_presence_pieces_are_dropped(engine):
    from troubleshooter.logs.prefilter import WINDOW as HEAD

    pf = Prefilter({"Watchdog caught": [0], "Bus error here": [1]}, {"via NET": [2], "Bus err": [3], "NCCL WARN": [4]},
                   engine=engine)
    filler = b"step 1 via NET/IB ok\n" * (HEAD // 21 + 10)
    straddle = b"x" * (HEAD - len(b"step 1 ") - 3) + b"\n"  # a line anchor that starts just before HEAD
    chunk = straddle + b"Watchdog caught 1\n" + filler + b"Bus error here\nNCCL WARN x\nWatchdog caught 2\n"
    found, present = pf.candidates(chunk)
    assert present == {2, 3, 4}
    lines = {chunk[start:chunk.index(b"\n", start)] for start in found}
    assert lines == {b"Watchdog caught 1", b"Bus error here", b"Watchdog caught 2"}
