"""Live jobs: ``troubleshoot attach`` (who is stuck where), ``troubleshoot run`` (watch a launch), flight recorder.

Findings leave this package as hit facts ``live.<finding-id>`` (lists of ``{detail, rank, vars,
order, source}``) plus the informational facts declared in :func:`fact_specs`.
"""

from __future__ import annotations

from typing import Any

from troubleshooter.core.facts import FactSpec

INFO_FACTS = (
    FactSpec("live.launcher", "str", "Launcher of the inspected job: torchrun, deepspeed, mpirun, srun, accelerate, none"),
    FactSpec("live.world_size", "int", "WORLD_SIZE as the job's ranks see it"),
    FactSpec("live.ranks", "list", "Each rank of the job: {rank, pid, host, local_rank, state, kind, frame}"),
    FactSpec("live.groups", "list", "Ranks grouped by stack signature: {ranks, kind, what, where, odd_one_out, frames}"),
    FactSpec("live.missing_ranks", "list", "Ranks of a single-node world that no longer run"),
    FactSpec("live.unreadable_ranks", "list", "Ranks whose stack py-spy could not read"),
    FactSpec("live.fr_prefix", "str", "Path prefix of the flight recorder dumps that were read"),
    FactSpec("live.fr_dumps", "int", "Number of flight recorder dumps read (one per rank)"),
    FactSpec("live.fr_ranks", "list", "Per rank: last collective entered and completed (flight recorder)"),
    FactSpec("live.fr_first_mismatch", "dict", "First collective sequence number at which the ranks' dumps disagree"),
    FactSpec("live.fr_pipes_triggered", "list", "Debug-info pipes written to make live ranks dump their flight recorder"),
    FactSpec("live.fr_buffer_off", "bool", "The job's ranks run with the flight recorder buffer set to 0"),
    FactSpec("live.exit_code", "int", "Exit code of the launch command run under `troubleshoot run`"),
    FactSpec("live.stalled", "bool", "The job made no progress (no output, no CPU) for --stall seconds"),
    FactSpec("live.stall_s", "float", "The --stall threshold in seconds"),
    FactSpec("live.interrupted", "bool", "The user pressed Ctrl-C during `troubleshoot run`"),
    FactSpec("live.duration_s", "float", "Wall time of the watched job in seconds"),
)


def hit_finding_ids(rules: Any) -> list[str]:
    """Finding ids this package can raise: those named in rules/live/pictures.yaml, plus the flight recorder's."""
    from troubleshooter.live.rules import live_rules_for

    ids = {pic.finding for pic in live_rules_for(rules).pictures}
    ids |= {"collective-timeout", "collective-mismatch", "flight-recorder-dump-refused"}
    return sorted(i for i in ids if i in rules.findings)


def fact_specs(rules: Any) -> list[FactSpec]:
    """Every fact ``attach`` and ``run`` may produce (loading rules/live/ also validates it)."""
    hits = [FactSpec(f"live.{fid}", "list", f"Hits for {fid} from the stacks or flight recorder of a live job")
            for fid in hit_finding_ids(rules)]
    return [*INFO_FACTS, *hits]
