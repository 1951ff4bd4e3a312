"""Test double for the hardware probe: rank 1 reports a different torch version (a stale node, simulated)."""

from __future__ import annotations

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.probe import RANK, Probe, ProbeContext, ProbeResult

SIMULATED = "0.0.0+stale"


class StaleTorchOnRankOne(Probe):
    """Reports this rank's real torch version, except on rank 1."""

    id = "hardware"
    title = "torch version (rank 1 simulated stale)"
    scope = RANK
    produces = (FactSpec("hw.torch_version", "str", "torch.__version__"),)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Measure torch.__version__; replace it on rank 1."""
        import torch

        return self.result({"hw.torch_version": SIMULATED if ctx.rank == 1 else torch.__version__})
