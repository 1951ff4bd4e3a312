"""What the home screen shows at a glance: launcher, world size, backend, GPUs.

Read from environment variables (the launcher table ``--auto`` uses) and ``nvidia-smi -L`` only: never imports torch, so the
first screen stays fast. ``gpus()`` runs a subprocess and belongs in a worker.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Mapping

from troubleshooter.core.launchers import launcher_table

def launcher_summary(env: Mapping[str, str], nproc: int, backend: str) -> dict[str, str]:
    """Launcher, world size and backend as ``--auto`` would see them (strings for display; rules/launchers.yaml)."""
    launchers = launcher_table()
    launch = launchers.launch(env)
    if launch:
        kind, size = launch
        name = launchers.launcher_name(kind)
        launcher, world = (name if name == kind else f"{name} ({kind})"), str(size)
    else:
        scheduler = launchers.scheduler(env)
        launcher = "none (local world" + (f"; inside a {scheduler} allocation)" if scheduler else ")")
        world = f"{nproc} (--nproc)"
    return {
        "launcher": launcher,
        "world size": world,
        "backend": backend if backend != "auto" else "auto (nccl if GPUs)",
        "master": f"{env['MASTER_ADDR']}:{env.get('MASTER_PORT', '?')}" if env.get("MASTER_ADDR") else "not set",
    }


def gpus(timeout_s: float = 3.0) -> str:
    """The GPUs ``nvidia-smi -L`` lists, as a short line; a reason when it cannot tell."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return "none visible (no nvidia-smi)"
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"unknown (nvidia-smi -L did not answer within {timeout_s:g} s)"
    except OSError as exc:
        return f"unknown (nvidia-smi: {exc.strerror})"
    lines = [line for line in out.stdout.splitlines() if line.startswith("GPU ")]
    if out.returncode != 0 or not lines:
        return f"none ({(out.stderr or out.stdout).strip().splitlines()[0][:60] if (out.stderr or out.stdout).strip() else 'nvidia-smi found no GPU'})"
    names = sorted({line.split(":", 1)[1].split("(UUID")[0].strip() for line in lines})
    return f"{len(lines)} × {', '.join(names)}"
