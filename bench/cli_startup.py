"""Time ``troubleshoot --help`` against a bare ``python -c pass`` (target: < 0.3 s more).

Usage: python bench/cli_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def timed(cmd: list[str], runs: int) -> float:
    """Median wall time of ``runs`` executions of ``cmd`` (after one warm-up)."""
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    """Print both medians and the difference; exit 1 when over the target."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    entry = shutil.which("troubleshoot")
    tool = [entry, "--help"] if entry else [sys.executable, "-m", "troubleshooter", "--help"]
    bare = timed([sys.executable, "-c", "pass"], args.runs)
    cli = timed(tool, args.runs)
    print(f"python -c pass        {bare * 1000:7.1f} ms (median of {args.runs})")
    print(f"troubleshoot --help   {cli * 1000:7.1f} ms (median of {args.runs})")
    print(f"difference            {(cli - bare) * 1000:7.1f} ms (target < 300 ms)")
    return 0 if cli - bare < 0.3 else 1


if __name__ == "__main__":
    sys.exit(main())
