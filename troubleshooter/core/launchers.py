"""Which launcher started a process, read from its environment."""

from __future__ import annotations

from typing import Mapping

LOCAL_WORLD_VAR = "TROUBLESHOOTER_LOCAL_WORLD"  # set in the ranks of the troubleshooter's own local world
LAUNCHER_MARKERS = ("TORCHELASTIC_RUN_ID", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "PMIX_RANK")


def under_launcher(env: Mapping[str, str]) -> bool:
    """True when this process is one rank of a launched job (not the troubleshooter's own local world)."""
    if env.get(LOCAL_WORLD_VAR):
        return False
    if "RANK" in env and "WORLD_SIZE" in env:
        return True
    if int(env.get("SLURM_NTASKS", "1") or 1) > 1 and "SLURM_PROCID" in env:
        return True
    return any(marker in env for marker in LAUNCHER_MARKERS)
