"""``Job``: the one ``job.json`` schema a worker process reads (rank worker and isolated node probe alike)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Job:
    """What a worker runs and with what; written by the parent (:meth:`write`), read by the child (:meth:`read`).

    ``probe_env`` is the user's environment, which NODE probes always judge. RANK/WORLD probes judge it
    too under the user's launcher (distributed mode fills RANK/MASTER_* in for MPI/SLURM children); in
    the troubleshooter's own ``local_world`` they judge the rank's environment, which says so
    (``TROUBLESHOOTER_LOCAL_WORLD``) and is never presented as the user's launcher.
    """

    probe_dirs: list[str]
    options: dict[str, Any]
    facts: dict[str, Any]
    timeouts: dict[str, float]
    probe_env: dict[str, str]
    probes: list[str] = field(default_factory=list)  # RANK/WORLD probes, run in every rank
    node_probes: list[str] = field(default_factory=list)  # NODE probes (rank worker: once, in local rank 0)
    backend: str = "auto"
    needs_world: bool = False
    local_world: bool = False
    init_timeout_s: float = 60.0
    events_dir: str = ""  # rank worker: where rank<N>.jsonl event streams go
    result_path: str = ""  # node worker: where the one result is written

    def write(self, path: Path) -> Path:
        """Write the job file; returns ``path``."""
        path.write_text(json.dumps(asdict(self), default=str))
        return path

    @classmethod
    def read(cls, path: str | Path) -> "Job":
        """Read a job file written by :meth:`write`."""
        return cls(**json.loads(Path(path).read_text()))
