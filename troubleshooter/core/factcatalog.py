"""Every fact a rule may read: declared by probes, the scanner, log signatures, questions, or the core."""

from __future__ import annotations

from typing import Iterable

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.registry import Registry
from troubleshooter.core.ruleset import RuleSet

CORE_FACTS = (
    FactSpec("world.size", "int", "Number of ranks in the diagnosed world"),
    FactSpec("world.backend", "str", "torch.distributed backend used by the diagnosis (gloo/nccl)"),
    FactSpec("world.launcher", "str", "How the diagnosis was launched: local, torchrun, slurm, mpirun, deepspeed"),
    FactSpec("world.nodes", "int", "Number of distinct hosts among the ranks"),
    FactSpec("world.missing_ranks", "list", "Ranks that never joined the diagnosis world"),
    FactSpec("world.init_s", "float", "Seconds this rank spent in init_process_group"),
    FactSpec("world.stuck_probe", "str", "The probe (or 'init') during which the world was torn down"),
    FactSpec("world.stuck_ranks", "list", "Ranks that did not arrive (the laggards) when the world hung or died"),
    FactSpec("world.waiting_ranks", "list", "Ranks that were waiting for the laggards"),
    FactSpec("world.stuck_phases", "dict", "Rank -> 'probe:phase' each unfinished rank was in at teardown"),
    FactSpec("world.teardown_reason", "str", "Why the supervisor tore the world down"),
    FactSpec("world.dead_ranks", "list", "Ranks whose process died during the diagnosis"),
    FactSpec("world.dead_exit_codes", "dict", "Rank -> exit code of the ranks that died"),
    FactSpec("world.join_error", "str", "Why the diagnosis process group could not form"),
    FactSpec("run.mode", "str", "auto, tui, scan, logs, probe"),
    FactSpec("options.backend", "str", "Backend asked for with --backend"),
    FactSpec("options.grad_accum_steps", "int", "Gradient accumulation steps the user's job uses (--grad-accum)"),
)


def probe_core_facts(probe_ids: Iterable[str]) -> list[FactSpec]:
    """Facts the runner records about each probe run."""
    specs = []
    for pid in probe_ids:
        specs += [
            FactSpec(f"probe.{pid}.status", "str", f"Outcome of the {pid} probe: ok, skipped, error, timeout"),
            FactSpec(f"probe.{pid}.stuck_ranks", "list", f"Ranks that had not finished {pid} when it timed out"),
            FactSpec(f"probe.{pid}.stuck_phases", "dict", f"Rank -> phase each stuck rank was in during {pid}"),
        ]
    return specs


def answer_facts(rules: RuleSet) -> list[FactSpec]:
    """Each tree question stores its answer as ``answer.<node-id>``."""
    return [FactSpec(f"answer.{node_id}", "str", node["ask"])
            for tree in rules.trees.values() for node_id, node in tree["nodes"].items()
            if isinstance(node, dict) and "ask" in node]


def provider_facts(rules: RuleSet) -> list[FactSpec]:
    """Facts declared by the scanner, the log analyzer, live jobs and distributed mode."""
    from troubleshooter import distributed, live, logs, scan

    return [spec for module in (scan, logs, live, distributed) for spec in module.fact_specs(rules)]


def all_fact_specs(rules: RuleSet, registry: Registry) -> dict[str, FactSpec]:
    """key -> spec for every fact any part of the tool can produce."""
    specs = [*CORE_FACTS, *probe_core_facts(registry.probes), *answer_facts(rules), *provider_facts(rules)]
    specs += [spec for probe in registry.probes.values() for spec in probe.produces]
    return {spec.key: spec for spec in specs}
