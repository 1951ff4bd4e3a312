"""Child-process entry point that runs one probe for :mod:`troubleshooter.run.node_runner`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from troubleshooter.core.facts import Facts
from troubleshooter.core.probe import ProbeContext, run_probe
from troubleshooter.core.registry import Registry
from troubleshooter.run.job import Job


def main(job_path: str) -> int:
    """Load the job, run the probe, write its result JSON."""
    job = Job.read(job_path)
    (probe_id,) = job.node_probes
    probe = Registry.load(job.probe_dirs).get(probe_id)()
    ctx = ProbeContext(env=job.probe_env, options=job.options, facts=Facts.from_dict(job.facts, "earlier"),
                       timeout_s=job.timeouts[probe_id])
    result = run_probe(probe, ctx)
    Path(job.result_path).write_text(json.dumps(result.to_dict(), default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
