"""Benchmark: wall time of ``troubleshoot --auto`` (default probes) against a bare 2-rank torchrun script.

The bare script is the minimum any DDP job pays: torchrun, 2 ranks importing torch, gloo
init_process_group, one all_reduce, one barrier. Target: ``--auto`` within 1.5x of it. The
breakdown (from the report: world init and each probe's duration per rank) shows where the
time goes.

    python bench/auto_wall.py [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

BARE = """
    import torch, torch.distributed as dist
    dist.init_process_group("gloo")
    t = torch.ones(1024)
    dist.all_reduce(t)
    assert t[0].item() == dist.get_world_size()
    dist.barrier()
    dist.destroy_process_group()
    """


def timed(cmd: list[str], cwd: Path) -> float:
    """Seconds ``cmd`` takes (it must succeed or report findings: exit 0 or 1)."""
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return time.monotonic() - started


def main() -> int:
    """Alternate the two commands ``--repeat`` times; print medians, the ratio and the breakdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="auto-wall-") as tmp:
        tmp_path = Path(tmp)
        (tmp_path / "bare.py").write_text(textwrap.dedent(BARE))
        report = tmp_path / "r.json"
        bare_cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "bare.py"]
        auto_cmd = [sys.executable, "-m", "troubleshooter", "--auto", "-q", "--format", "json", "-o", str(report)]
        bare, auto = [], []
        for _ in range(args.repeat):
            bare.append(timed(bare_cmd, tmp_path))
            auto.append(timed(auto_cmd, tmp_path))
        doc = json.loads(report.read_text())
    b, a = statistics.median(bare), statistics.median(auto)
    print(f"bare torchrun 2-rank gloo init + all_reduce + barrier: {', '.join(f'{v:.2f}' for v in bare)} s "
          f"(median {b:.2f})")
    print(f"troubleshoot --auto (default probes):                  {', '.join(f'{v:.2f}' for v in auto)} s "
          f"(median {a:.2f})")
    print(f"ratio auto / bare = {a / b:.2f} (target <= 1.5: {'met' if a / b <= 1.5 else 'MISSED'})")
    print("breakdown of the last --auto run (probe durations in seconds):")
    per_probe: dict[str, list[float]] = {}
    for probe in doc["probes"]:
        per_probe.setdefault(probe["name"], []).append(probe["duration_s"])
    for name, values in per_probe.items():
        print(f"  {name:<12} {'  '.join(f'{v:6.2f}' for v in values)}")
    init = [r["facts"].get("collective.init_s") for r in doc.get("ranks", [])]
    if any(v is not None for v in init):
        print(f"  init_process_group per rank: {', '.join(f'{v:.2f}' for v in init if v is not None)}")
    phases = next((p["facts"].get("startup.phase_s") for p in doc["probes"] if p["name"] == "startup"), None)
    if phases:
        print(f"  start-up phases on rank 0: {phases}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
