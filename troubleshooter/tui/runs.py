"""Blocking calls the TUI makes from thread workers: run probes, run all checks, analyse files.

Thin glue over the core (runner, localworld, auto, scan, logs); each reports progress through a
callback so the worker can post messages, and none of them decides anything.
"""

from __future__ import annotations

import argparse
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

if TYPE_CHECKING:  # the core is imported when a run starts, not when the first screen paints
    from troubleshooter.core.probe import ProbeResult
    from troubleshooter.core.registry import Registry
    from troubleshooter.core.ruleset import RuleSet

Say = Callable[[str], None]


@dataclass
class ProbeBatch:
    """What a probe run produced."""

    results: list[ProbeResult] = field(default_factory=list)
    world_facts: dict[str, Any] = field(default_factory=dict)
    world: dict[str, Any] = field(default_factory=dict)


def default_args(**overrides: Any) -> argparse.Namespace:
    """The options of a bare ``troubleshoot`` (what the CLI passes when given no arguments)."""
    from troubleshooter.cli import build_parser

    args = build_parser().parse_args([])
    for key, value in overrides.items():
        setattr(args, key, value)
    return args


def describe_event(rank: int, event: Mapping[str, Any]) -> str | None:
    """One status line for a rank-worker event (None for events not worth showing)."""
    kind = event.get("event")
    if kind == "init-start":
        return f"rank {rank}: joining the process group (init_process_group)"
    if kind == "init-done":
        return f"rank {rank}: joined ({event.get('backend')}) in {float(event.get('seconds') or 0):.2f} s"
    if kind == "probe-start":
        return f"rank {rank}: {event.get('probe')} started"
    if kind == "phase":
        return f"rank {rank}: {event.get('phase')}"
    if kind == "probe-end":
        result = event.get("result") or {}
        return f"rank {rank}: {result.get('name')} {result.get('status')}"
    if kind == "error":
        return f"rank {rank}: error: {event.get('message')}"
    return None


def run_probes(registry: Registry, probe_ids: Iterable[str], args: argparse.Namespace,
               facts: Mapping[str, Any], say: Say, cancel: threading.Event | None = None) -> ProbeBatch:
    """Run the named probes: node probes isolated here, rank/world probes in a local world of ``--nproc`` ranks."""
    from troubleshooter.run.auto import options_from_args
    from troubleshooter.run.local_world import run_world
    from troubleshooter.core.probe import NODE
    from troubleshooter.run.node_runner import run_isolated

    classes = [registry.get(p) for p in probe_ids]
    options = options_from_args(args)
    facts = {k: v for k, v in facts.items() if not k.startswith(("answer.", "walk."))}
    batch = ProbeBatch()
    for cls in (c for c in classes if c.scope == NODE):
        say(f"{cls.title or cls.id}: running (node probe, up to {args.timeout or cls.timeout_s:g} s)")
        batch.results.append(run_isolated(cls, dict(os.environ), options, facts, args.probes, args.timeout, cancel))
    ranked = [c for c in classes if c.scope != NODE]
    if ranked:
        say(f"starting a local world of {args.nproc} rank(s) for {', '.join(c.id for c in ranked)}")

        def on_event(rank: int, event: dict) -> None:
            line = describe_event(rank, event)
            if line:
                say(line)

        outcome = run_world(ranked, args.nproc, backend=args.backend, options=options, facts=facts,
                            probe_dirs=args.probes, timeout_s=args.timeout, on_event=on_event, cancel=cancel)
        for results in outcome.results.values():
            batch.results += results
        batch.world = {"size": args.nproc, "backend": outcome.backend, "launcher": "local"}
        batch.world_facts = {"world.size": args.nproc, "world.launcher": "local", "world.nodes": 1,
                             **({"world.backend": outcome.backend} if outcome.backend else {}), **outcome.world_facts}
    return batch


def run_all_checks(rules: RuleSet, registry: Registry, args: argparse.Namespace, say: Say,
                   cancel: threading.Event | None = None) -> ProbeBatch:
    """The ``--auto`` path (every default probe), with the CLI's progress lines (one per result as it lands)."""
    from troubleshooter.run.auto import Progress, run_local
    from troubleshooter.run.session import Session

    class _Progress(Progress):  # the CLI's lines, posted to the TUI instead of printed on stderr
        def say(self, text: str) -> None:
            say(text)

    scratch = Session(rules, "tui")
    run_local(scratch, registry, args, _Progress(True), cancel)
    return ProbeBatch(list(scratch.results), dict(scratch.world_facts), dict(scratch.world))


def analyse_paths(paths: list[str], rules: RuleSet) -> dict[str, dict[str, Any]]:
    """Scan ``*.py`` files statically (never run) and analyse the other files as logs: source -> facts.

    Raises FileNotFoundError naming a missing path, and ImportError when the needed analyser
    is not part of this build.
    """
    for path in paths:
        if not Path(path).exists():
            raise FileNotFoundError(f"{path}: no such file or directory")
    scripts = [p for p in paths if p.endswith(".py") or Path(p).is_dir()]
    logs = [p for p in paths if p not in scripts]
    out: dict[str, dict[str, Any]] = {}
    if scripts:
        from troubleshooter.scan import scan_paths
        out["scan"] = dict(scan_paths(scripts).facts)
    if logs:
        from troubleshooter.logs import analyze_paths
        out["logs"] = dict(analyze_paths(logs, rules).facts)
    return out
