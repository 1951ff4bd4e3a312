"""Time the environment probes (launcher, system, tools, hardware, network) on this machine.

Usage: python bench/probes_env.py [--repeat N]

Each probe runs in this process through ``run_probe`` (as ``troubleshoot`` does inside its
isolated probe process). torch's import is timed apart from the hardware probe's own work.
The network probe is given MASTER_ADDR=127.0.0.1 and a free port so it resolves and binds.
Prints the first (cold) and best of N runs per probe, the torch import, and all five together; the target is < 1 s each.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time

from troubleshooter.core.probe import ProbeContext, run_probe
from troubleshooter.core.registry import Registry

PROBES = ("launcher", "system", "tools", "hardware", "network")
TARGET_S = 1.0


def main() -> int:
    """Run and print the timings; exit 1 when a probe misses the target or fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
    registry = Registry.load(entry_points=False)

    started = time.perf_counter()
    import torch  # noqa: F401  (the hardware probe's import, timed on its own)
    torch_import = time.perf_counter() - started

    first: dict[str, float] = {}
    best: dict[str, float] = {}
    status: dict[str, str] = {}
    totals = []
    for _ in range(args.repeat):
        round_start = time.perf_counter()
        for name in PROBES:
            result = run_probe(registry.get(name)(), ProbeContext(env=env, options={"nproc": 2}))
            first.setdefault(name, result.duration_s)
            best[name] = min(best.get(name, float("inf")), result.duration_s)
            status[name] = result.status
        totals.append(time.perf_counter() - round_start)

    print(f"{'probe':<10} {'status':<8} {'first run':>11} {'best of ' + str(args.repeat):>11}")
    for name in PROBES:
        flag = "" if first[name] < TARGET_S else "  (over the 1 s target)"
        print(f"{name:<10} {status[name]:<8} {first[name] * 1000:>8.1f} ms {best[name] * 1000:>8.1f} ms{flag}")
    print(f"{'all five':<10} {'':<8} {totals[0] * 1000:>8.1f} ms {min(totals) * 1000:>8.1f} ms  (sequential)")
    print(f"{'torch':<10} {'import':<8} {torch_import * 1000:>8.1f} ms  (once per process; not in the hardware row)")
    ok = all(s == "ok" for s in status.values()) and all(t < TARGET_S for t in first.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
