"""Log-analyzer throughput against ``grep -E -c`` with the same patterns, on the same file, in the same run.

Generates a ~200 MB NCCL_DEBUG=INFO-style multi-rank log (NCCL init blocks, channel
lines, training progress, warnings) with real error messages sprinkled in, then times

- ``grep -E -c -f PATTERNS FILE`` (every signature regex, translated to POSIX ERE), and
- ``troubleshoot logs``' analyzer (``analyze_paths``) on the same file,

alternately ``--repeat`` times (the best time of each counts: the machine may be shared), and
prints both, the ratio, and what the analyzer found. Usage::

    python bench/logs_throughput.py [--mb 200] [--repeat 3] [--keep] [--out PATH] [--engine re2|stdlib] [--baseline DIR]

The analyzer's prefilter runs on RE2 when the optional ``google-re2`` package is installed,
else on the stdlib; ``--engine`` forces one, and the line printed says which one ran.
``--baseline DIR`` also times the analyzer of another checkout (``DIR`` holds its ``troubleshooter/``
and ``rules/``, e.g. ``git worktree add`` or ``git archive`` of an older commit) on the same file, in
turn with the others: old against new in one run, on a machine whose load changes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's analyzer, not an installed one

from troubleshooter.logs import LogAnalyzer, analyze_paths  # noqa: E402
from troubleshooter.core.ruleset import load_rules  # noqa: E402

ERRORS = [
    "[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU {r} has a total capacity of 79.15 GiB of which 1.12 GiB is free.",
    "[rank{r}]:[E1121 23:25:31.000000 {pid} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
    "[rank{r}]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1347, remote process exited or there was a network error, NCCL version 2.18.5",
    "{host}:{pid}:{pid} [{d}] NCCL WARN Call to shm_open failed : Permission denied",
    "[rank{r}]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
    "[rank{r}]: torch.distributed.DistNetworkError: Connection reset by peer",
]


def _nccl_block(rng: random.Random, rank: int, nranks: int, host: str) -> list[str]:
    pid, dev = 40000 + rank, rank % 8
    h = f"{host}:{pid}:{pid}"
    lines = [f"[rank{rank}]:{h} [{dev}] NCCL INFO NCCL version 2.21.5+cuda12.4",
             f"[rank{rank}]:{h} [{dev}] NCCL INFO NET/IB : No device found.",
             f"[rank{rank}]:{h} [{dev}] NCCL INFO NET/Socket : Using [0]eth0:10.0.{rank // 8}.{rank % 8}<0>",
             f"[rank{rank}]:{h} [{dev}] NCCL INFO Using network Socket",
             f"[rank{rank}]:{h} [{dev}] NCCL INFO comm 0x55d4c8a0 rank {rank} nranks {nranks} cudaDev {dev} busId {dev}0000 - Init START",
             f"[rank{rank}]:{h} [{dev}] NCCL INFO Setting affinity for GPU {dev} to ffff,ffffffff"]
    for c in range(16):
        peer = (rank + 1) % nranks
        via = "P2P/IPC/read" if peer // 8 == rank // 8 else "NET/Socket/0"
        lines.append(f"[rank{rank}]:{h}:{pid + 100} [{dev}] NCCL INFO Channel {c:02d}/0 : {rank}[{dev}] -> {peer}[{peer % 8}] via {via}")
    lines += [f"[rank{rank}]:{h}:{pid + 100} [{dev}] NCCL INFO Connected all rings",
              f"[rank{rank}]:{h}:{pid + 100} [{dev}] NCCL INFO Connected all trees",
              f"[rank{rank}]:{h}:{pid + 100} [{dev}] NCCL INFO threadThresholds 8/8/64 | 128/8/64 | 512 | 512",
              f"[rank{rank}]:{h} [{dev}] NCCL INFO comm 0x55d4c8a0 rank {rank} nranks {nranks} cudaDev {dev} busId {dev}0000 - Init COMPLETE"]
    return lines


def generate(path: str, megabytes: int, seed: int = 7) -> int:
    """Write the benchmark log; returns the number of error lines sprinkled in."""
    rng = random.Random(seed)
    target, written, errors, step = megabytes << 20, 0, 0, 0
    with open(path, "w") as fh:
        while written < target:
            lines: list[str] = []
            for rank in range(16):  # a communicator init (or a re-init after a restart)
                lines += _nccl_block(rng, rank, 16, f"gpu-node-{rank // 8}")
            for _ in range(400):  # training progress between inits
                rank = rng.randrange(16)
                step += 1
                lines.append(f"[rank{rank}]:step {step:7d} | loss {rng.uniform(1, 3):.4f} | lr 3.00e-04 | grad_norm "
                             f"{rng.uniform(0.1, 2):.3f} | tokens/s {rng.randint(90000, 120000)} | mem 61.2 GiB")
                if rng.random() < 0.02:
                    lines.append(f"[rank{rank}]:[W1121 23:15:30.{rng.randint(0, 999999):06d} {40000 + rank} "
                                 "reducer.cpp:1400] Warning: Grad strides do not match bucket view strides.")
            if rng.random() < 0.3:
                rank = rng.randrange(16)
                lines.append(rng.choice(ERRORS).format(r=rank, pid=40000 + rank, d=rank % 8, host=f"gpu-node-{rank // 8}"))
                errors += 1
            chunk = "\n".join(lines) + "\n"
            fh.write(chunk)
            written += len(chunk)
    return errors


def to_ere(pattern: str) -> str:
    """Translate one signature regex (Python syntax) to POSIX ERE for GNU grep."""
    out, i, n = [], 0, len(pattern)
    outside = {"d": "[0-9]", "s": "[[:space:]]", "S": "[^[:space:]]", "w": "[[:alnum:]_]", "n": "", "b": "\\b"}
    inside = {"d": "0-9", "s": "[:space:]", "w": "[:alnum:]_", "n": ""}
    while i < n:
        ch = pattern[i]
        if pattern.startswith("(?!", i):  # ERE has no lookahead: drop it (grep then matches a superset)
            depth, i = 1, i + 3
            while depth:
                depth += {"(": 1, ")": -1}.get(pattern[i], 0) if pattern[i - 1] != "\\" else 0
                i += 1
        elif pattern.startswith("(?P<", i):
            i = pattern.index(">", i) + 1
            out.append("(")
        elif pattern.startswith("(?:", i):
            i += 3
            out.append("(")
        elif ch == "\\":
            nxt = pattern[i + 1]
            out.append(outside.get(nxt, "\\" + nxt if nxt in ".[()*+?{}|^$\\" else nxt))
            i += 2
        elif ch == "[":
            j, negate, items, close_bracket = i + 1, False, [], False
            if pattern[j] == "^":
                negate, j = True, j + 1
            while pattern[j] != "]" or j == i + 1 + negate and not items and pattern[j] == "]":
                if pattern[j] == "\\":
                    esc = pattern[j + 1]
                    if esc == "]":
                        close_bracket = True
                    else:
                        items.append(inside.get(esc, esc))
                    j += 2
                else:
                    items.append(pattern[j])
                    j += 1
            body = "".join(items)
            if negate and not body and not close_bracket:  # [^\n]: any character of the line
                out.append(".")
            else:
                out.append("[" + ("^" if negate else "") + ("]" if close_bracket else "") + body + "]")
            i = j + 1
        elif ch in "*+?}" and i + 1 < n and pattern[i + 1] == "?":
            out.append(ch)
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


_BASELINE_RUN = """
import json, sys, time
from troubleshooter.core.ruleset import load_rules
from troubleshooter.logs import LogAnalyzer, analyze_paths
rules = load_rules()
t0, c0 = time.perf_counter(), time.process_time()
analyze_paths([sys.argv[1]], analyzer=LogAnalyzer(rules))  # timed like ours: the analyzer's set-up included
print(json.dumps([time.perf_counter() - t0, time.process_time() - c0, len(rules.signatures)]))
"""


def _baseline(directory: str, path: str) -> tuple[float, float, int]:
    """Wall and CPU seconds of another checkout's analyzer on ``path`` (timed inside its own process)."""
    env = {**os.environ, "PYTHONPATH": os.path.abspath(directory)}
    run = subprocess.run([sys.executable, "-c", _BASELINE_RUN, path], capture_output=True, text=True, env=env,
                         timeout=3600, cwd=directory, check=True)
    wall, cpu, signatures = json.loads(run.stdout.strip().splitlines()[-1])
    return wall, cpu, signatures


def _children_cpu() -> float:
    """CPU seconds used so far by finished child processes (grep)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    """Generate, time both, print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the generated log (default 200)")
    parser.add_argument("--out", help="where to write the generated log (default: a new temporary file)")
    parser.add_argument("--keep", action="store_true", help="keep the generated log")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each side, best counts (default 3)")
    parser.add_argument("--engine", choices=("re2", "stdlib"), help="prefilter engine (default: re2 when installed)")
    parser.add_argument("--baseline", metavar="DIR", help="also time the analyzer of the checkout in DIR, in turn")
    args = parser.parse_args(argv)
    if args.out is None:  # a name of its own: concurrent runs must not share (and delete) one file
        handle, args.out = tempfile.mkstemp(prefix="ddp-logs-bench-", suffix=".log")
        os.close(handle)

    rules = load_rules()
    t0 = time.perf_counter()
    sprinkled = generate(args.out, args.mb)
    size = os.path.getsize(args.out)
    print(f"generated {size / 1e6:.1f} MB ({sprinkled} error lines) in {time.perf_counter() - t0:.1f}s: {args.out}")

    patterns = [to_ere(sig["pattern"]) for sig in rules.signatures]
    with tempfile.NamedTemporaryFile("w", suffix=".ere", delete=False) as fh:
        fh.write("\n".join(patterns) + "\n")
        pattern_file = fh.name
    try:
        # warm the page cache so both read the file from memory
        subprocess.run(["cat", args.out], stdout=subprocess.DEVNULL, check=True, timeout=600)
        grep_s = ours_s = grep_cpu = ours_cpu = base_s = base_cpu = float("inf")
        base_signatures = 0
        for _ in range(max(args.repeat, 1)):
            t0, c0 = time.perf_counter(), _children_cpu()
            grep = subprocess.run(["grep", "-E", "-c", "-f", pattern_file, args.out], capture_output=True, text=True,
                                  timeout=3600, env={**os.environ, "LC_ALL": "C"})
            grep_s, grep_cpu = min(grep_s, time.perf_counter() - t0), min(grep_cpu, _children_cpu() - c0)
            if grep.returncode > 1:
                print(f"grep failed: {grep.stderr.strip()}", file=sys.stderr)
                return 2
            t0, c0 = time.perf_counter(), time.process_time()
            analyzer = LogAnalyzer(rules, engine=args.engine)
            facts = analyze_paths([args.out], analyzer=analyzer).facts
            ours_s, ours_cpu = min(ours_s, time.perf_counter() - t0), min(ours_cpu, time.process_time() - c0)
            if args.baseline:
                wall, cpu, base_signatures = _baseline(args.baseline, args.out)
                base_s, base_cpu = min(base_s, wall), min(base_cpu, cpu)
    finally:
        os.unlink(pattern_file)
        if not args.keep:
            os.unlink(args.out)

    mb = size / 1e6
    found = sorted(k[4:] for k in facts if k[4:] in rules.findings)
    print(f"signatures: {len(patterns)}; grep matched lines: {grep.stdout.strip()}")
    print(f"grep -E -c : {grep_s:7.2f} s  {mb / grep_s:8.1f} MB/s")
    print(f"analyzer   : {ours_s:7.2f} s  {mb / ours_s:8.1f} MB/s  ({facts['log.lines']} lines; found {', '.join(found)}; "
          f"prefilter engine {analyzer.prefilter.engine})")
    print(f"ratio analyzer/grep: {ours_s / grep_s:.2f}x (target <= 2x)")
    print(f"cpu time: grep {grep_cpu:.2f} s, analyzer {ours_cpu:.2f} s, ratio {ours_cpu / grep_cpu:.2f}x "
          "(less sensitive to a shared machine's load)")
    if args.baseline:
        print(f"baseline {args.baseline} ({base_signatures} signatures): {base_s:.2f} s, {base_s / grep_s:.2f}x grep; "
              f"cpu {base_cpu:.2f} s, {base_cpu / grep_cpu:.2f}x grep")
    return 0


if __name__ == "__main__":
    sys.exit(main())
