"""Live-fault accuracy: real faults injected on this machine, diagnosed through the real CLI.

For every fault of ``tests/live_faults/faults.py`` (a bound MASTER_PORT, an unresolvable MASTER_ADDR,
a missing or down interface, a rank that never joins, SIGKILL, an exception on one rank, RANK >=
WORLD_SIZE, OMP_NUM_THREADS unset under mpirun, two hosts in network namespaces that cannot reach
each other, ...) prints the expected finding id, what the report showed first, pass/fail with the
reason, the wall time, and the exact command; then the total. One fault at a time (the machine is
shared). Faults needing root + ip netns / unshare are reported as SKIP elsewhere.

``--auto`` faults run the default probe set (what a user gets from plain ``troubleshoot --auto``);
``--quick`` limits them to the probes that matter, as the tests do.

    python bench/live_faults.py [--quick] [--only NAME ...] [--keep DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.live_faults.faults import FAULTS, missing_prerequisite, verdict  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the relevant probes for --auto faults")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these faults")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep every fault's report, log and output here")
    args = parser.parse_args()
    faults = [f for f in FAULTS if not args.only or f.name in args.only]
    if not faults:
        parser.error(f"no such fault; known: {', '.join(f.name for f in FAULTS)}")
    root = args.keep or Path(tempfile.mkdtemp(prefix="live-faults-"))
    print(f"# live faults ({'quick probe selection' if args.quick else 'default probes'}); work dir {root}\n")
    print("| fault | expected | reported first | result | wall s |")
    print("|---|---|---|---|---|")
    rows, start = [], time.monotonic()
    for fault in faults:
        if missing := missing_prerequisite(fault):
            print(f"| {fault.name} | {' / '.join(fault.expected)} | - | SKIP ({missing}) | - |", flush=True)
            rows.append((fault, None, None))
            continue
        outcome = fault.diagnose(root / fault.name, not args.quick)
        passed, why = verdict(fault, outcome)
        result = "pass" if passed else f"FAIL: {why}"
        print(f"| {fault.name} | {' / '.join(fault.expected)}{f' [rank {fault.rank}]' if fault.rank is not None else ''}"
              f" | {outcome.shown()} | {result} | {outcome.seconds:.1f} |", flush=True)
        rows.append((fault, outcome, passed))
    ran = [r for r in rows if r[1] is not None]
    passed = sum(1 for r in ran if r[2])
    print(f"\nTOTAL: {passed}/{len(ran)} faults diagnosed right ({len(rows) - len(ran)} skipped), "
          f"{time.monotonic() - start:.0f} s wall\n")
    print("## commands")
    for fault, outcome, _ in ran:
        print(f"- {fault.name}: `{outcome.command}` -> exit {outcome.returncode}"
              + (f" ({outcome.note})" if outcome.note else ""))
        if outcome.control is not None:
            print(f"  - healthy control: `{outcome.control.command}` -> {outcome.control.shown()}")
    return 0 if passed == len(ran) else 1


if __name__ == "__main__":
    sys.exit(main())
