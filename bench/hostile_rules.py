"""Time the refusal of hostile ``--rules`` directories (targets: exit 2, <= 2 s per command, <= 1 s per file).

The directories are those of ``tests/rules/test_rule_budgets.py``: alias trees in a check's ``when`` and in a
finding's ``references``, a nested-loop ``fix`` template, a ``(a+)+$`` signature, a 5000-digit number, a
misplaced file. Each is run through ``rules check --rules DIR`` and ``--rules DIR logs job.log``; wall and CPU
seconds are printed (on a loaded machine the CPU figure is the one to compare).

Usage: python bench/hostile_rules.py [--runs N]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.rules.test_rule_budgets import HOSTILE, LOG, _write  # noqa: E402 - the test's own directories


def timed(argv: list[str], cwd: Path) -> tuple[int, float, float]:
    """(exit code, wall seconds, CPU seconds of the child) of one ``troubleshoot`` run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    code = subprocess.run([sys.executable, "-m", "troubleshooter", *argv], cwd=cwd, capture_output=True,
                          timeout=120).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return code, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    """Print one line per case and command; exit 1 when a command does not exit 2 or takes over 2 s of CPU."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "job.log").write_text(LOG, encoding="utf-8")
        print(f"{'case':<22} {'command':<28} exit  wall s  cpu s (median of {args.runs})")
        for case, (files, _where, _why) in sorted(HOSTILE.items()):
            rules = _write(root / case, files)
            for label, argv in (("rules check --rules DIR", ["rules", "check", "--rules", str(rules)]),
                                ("--rules DIR logs job.log", ["--rules", str(rules), "logs", "job.log"])):
                runs = [timed(argv, root) for _ in range(args.runs)]
                code = runs[0][0]
                wall, cpu = statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs)
                failed |= code != 2 or cpu > 2.0
                print(f"{case:<22} {label:<28} {code:>4} {wall:>7.2f} {cpu:>6.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
