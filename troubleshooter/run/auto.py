"""``troubleshoot --auto``: every default check, no questions, one report.

Without a launcher around it, NODE probes run here (each isolated in a subprocess) while a
local world of ``--nproc`` ranks runs the RANK and WORLD probes. Under torchrun / srun /
mpirun / deepspeed, every process is a rank and distributed mode takes over.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from troubleshooter.core.errors import UsageError
from troubleshooter.core.probe import NODE, ProbeResult
from troubleshooter.core.registry import Registry
from troubleshooter.report.document import emit, exit_code
from troubleshooter.core.ruleset import load_rules
from troubleshooter.run.session import Session, sort_results

LAUNCHER_MARKERS = ("TORCHELASTIC_RUN_ID", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "PMIX_RANK")


def under_launcher(env: dict[str, str]) -> bool:
    """True when this process is one rank of a launched job (not our own local world)."""
    if env.get("TROUBLESHOOTER_LOCAL_WORLD"):
        return False
    if "RANK" in env and "WORLD_SIZE" in env:
        return True
    if int(env.get("SLURM_NTASKS", "1") or 1) > 1 and "SLURM_PROCID" in env:
        return True
    return any(marker in env for marker in LAUNCHER_MARKERS)


def options_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The options probes may read (ctx.options); a malformed or missing --model/--data is a UsageError."""
    from troubleshooter.run.user_code import HookError, check_spec

    for flag, spec in (("--model", args.model), ("--data", args.data)):
        if spec:
            try:
                check_spec(spec)
            except HookError as exc:
                raise UsageError(f"{flag} {exc}") from None
    return {"model": args.model, "data": args.data, "backend": args.backend, "nproc": args.nproc,
            "scripts": getattr(args, "script", []), "logs": getattr(args, "log", []), "grad_accum": args.grad_accum,
            "num_workers": args.num_workers, "precision": args.precision, "launcher": args.launcher,
            "hostfile": args.hostfile, "cwd": os.getcwd()}


class Progress:
    """Live one-line-per-event progress on stderr (quiet in -q mode)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.lock = threading.Lock()

    def say(self, text: str) -> None:
        """Print one progress line."""
        if self.enabled:
            with self.lock:
                print(f"  {text}", file=sys.stderr, flush=True)

    def result(self, result: ProbeResult) -> None:
        """A probe finished."""
        rank = f" rank {result.rank}" if result.rank is not None else ""
        self.say(f"{result.probe}{rank}: {result.status} ({result.duration_s * 1000:.0f} ms)"
                 + (f" {result.message}" if result.status != "ok" and result.message else ""))


def gather_static(session: Session, args: argparse.Namespace) -> None:
    """Scan scripts and analyse logs given on the command line (never runs the scripts)."""
    if args.script:
        from troubleshooter.scan import scan_paths
        session.add_facts(scan_paths(args.script).facts, "scan")
    if args.log:
        from troubleshooter.logs import analyze_paths
        session.add_facts(analyze_paths(args.log, session.rules).facts, "logs")


def run_local(session: Session, registry: Registry, args: argparse.Namespace, progress: Progress,
              cancel: threading.Event | None = None) -> None:
    """NODE probes here, RANK/WORLD probes in a local world; results land in ``session`` as they arrive."""
    from troubleshooter.run.local_world import run_world
    from troubleshooter.run.node_runner import run_node_probes

    selected = registry.select(args.probe, args.skip)
    ranked = [p for p in selected if p.scope != NODE]
    # NODE probes that import torch run in rank 0 of the world (which imports torch anyway), the rest here
    in_rank0 = [p for p in selected if p.scope == NODE and "torch" in p.needs] if ranked else []
    node = [p for p in selected if p.scope == NODE and p not in in_rank0]
    options = options_from_args(args)
    known = {fact.key: fact.value for fact in session.extra_facts}  # scan/log facts the probes may read
    if args.nproc < 1:
        raise UsageError(f"--nproc must be at least 1, got {args.nproc}")
    session.world = {"size": args.nproc if ranked else 1, "backend": None, "launcher": "local"}
    session.world_facts.update({"world.size": session.world["size"], "world.launcher": "local", "world.nodes": 1})
    if args.backend != "auto":
        session.world_facts["options.backend"] = args.backend
    if args.grad_accum:
        session.world_facts["options.grad_accum_steps"] = args.grad_accum

    def on_done(result: ProbeResult) -> None:
        session.add_result(result)
        progress.result(result)

    node_thread = threading.Thread(target=run_node_probes, kwargs=dict(
        probes=node, env=dict(os.environ), options=options, facts=known, probe_dirs=args.probes,
        timeout_s=args.timeout, on_done=on_done, cancel=cancel), daemon=True)
    node_thread.start()
    try:
        if ranked:
            progress.say(f"starting a local world of {args.nproc} rank(s) for: {', '.join(p.id for p in ranked)}")

            def on_event(rank: int, event: dict) -> None:
                if event["event"] == "probe-end":
                    on_done(ProbeResult.from_dict(event["result"]))
                elif event["event"] == "init-done" and rank == 0:
                    progress.say(f"world joined ({event.get('backend')}) in {event.get('seconds', 0):.2f} s")

            outcome = run_world(ranked, args.nproc, backend=args.backend, options=options, facts=known,
                                probe_dirs=args.probes, timeout_s=args.timeout, on_event=on_event,
                                node_probes=in_rank0, cancel=cancel)
            session.world["backend"] = outcome.backend
            if outcome.backend:
                session.world_facts["world.backend"] = outcome.backend
            session.world_facts.update(outcome.world_facts)
            recorded = {(r.probe, r.rank) for r in session.results}
            for rank, results in outcome.results.items():  # timeouts synthesised by the supervisor
                for result in results:
                    if (result.probe, result.rank) not in recorded:
                        on_done(result)
            if outcome.world_facts:
                session.extra["rank_logs"] = {str(r): tail for r, tail in outcome.log_tails.items()}
    finally:
        node_thread.join()
    session.results[:] = sort_results(session.results)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def command(args: argparse.Namespace) -> int:
    """Run the automatic diagnosis and write the report; exit code per design.md."""
    rules = load_rules(args.rules)
    registry = Registry.load(args.probes)
    if under_launcher(dict(os.environ)):
        from troubleshooter.distributed import run_distributed
        return run_distributed(args, rules, registry)
    for path in [*args.script, *args.log]:
        if path != "-" and not Path(path).exists():
            raise UsageError(f"{path}: no such file or directory")
    session = Session(rules, "auto")
    progress = Progress(not args.quiet and args.output != "-" and sys.stderr.isatty())  # live lines for people, not logs
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)  # schedulers cancel with SIGTERM
    try:
        gather_static(session, args)
        run_local(session, registry, args, progress)
    except KeyboardInterrupt:
        session.interrupted = True
        print("troubleshoot: interrupted; writing a partial report", file=sys.stderr)
    finally:
        signal.signal(signal.SIGTERM, previous)
    doc = session.report()
    return finish(doc, args, interrupted=session.interrupted)


def finish(doc: dict, args: argparse.Namespace, interrupted: bool = False) -> int:
    """Print the doctor view and/or write the report; the exit code of the run."""
    from troubleshooter.report.render import render_terminal

    if args.output:
        fmt = emit(doc, args.format, args.output, default="md")
        if args.output != "-":
            if not args.quiet:
                print(render_terminal(doc, color=sys.stdout.isatty() and not args.no_color), end="")
            print(f"report written to {args.output} ({fmt})", file=sys.stderr)
    elif args.format:
        emit(doc, args.format, None)
    else:
        print(render_terminal(doc, color=sys.stdout.isatty() and not args.no_color, quiet=args.quiet), end="")
    return 130 if interrupted else exit_code(doc)
