"""What the home screen shows at a glance: launcher, world size, backend, GPUs.

Read from environment variables and ``nvidia-smi -L`` only: never imports torch, so the
first screen stays fast. ``gpus()`` runs a subprocess and belongs in a worker.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Mapping

# (variable that reveals the launcher, launcher name), most specific first.
LAUNCHER_VARS = (("TORCHELASTIC_RUN_ID", "torchrun"), ("OMPI_COMM_WORLD_SIZE", "mpirun (Open MPI)"),
                 ("PMI_SIZE", "mpirun (MPICH/Intel MPI)"), ("SLURM_JOB_ID", "slurm"),
                 ("DEEPSPEED_LAUNCHER", "deepspeed"))
WORLD_SIZE_VARS = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS")


def launcher_summary(env: Mapping[str, str], nproc: int, backend: str) -> dict[str, str]:
    """Launcher, world size and backend as this session would see them (strings for display)."""
    launcher = next((name for var, name in LAUNCHER_VARS if env.get(var)), None)
    size = next((env[v] for v in WORLD_SIZE_VARS if env.get(v)), None)
    return {
        "launcher": launcher or "none (local world)",
        "world size": size or f"{nproc} (--nproc)",
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
