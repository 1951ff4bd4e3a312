"""``troubleshoot --auto``: every default check, no questions, one report.

Without a launcher around it, the run layer runs NODE probes here (each isolated) and a local
world of ``--nproc`` ranks for the RANK and WORLD probes. Under torchrun / srun / mpirun /
deepspeed every process is a rank and distributed mode takes over.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

from troubleshooter.core.launchers import under_launcher
from troubleshooter.core.registry import Registry
from troubleshooter.core.ruleset import load_rules
from troubleshooter.report.document import emit, exit_code
from troubleshooter.run.events import terminal_lines
from troubleshooter.run.options import RunOptions


def run_options(args: argparse.Namespace) -> RunOptions:
    """The command line as :class:`RunOptions` (the one conversion from argparse)."""
    get = lambda name, default=None: getattr(args, name, default)  # noqa: E731 - sub-commands lack some flags
    return RunOptions(only=tuple(get("probe") or ()), skip=tuple(get("skip", ()) or ()), nproc=get("nproc", 2), backend=get("backend", "auto"),
                      timeout_s=get("timeout"), model=get("model"), data=get("data"),
                      scripts=tuple(get("script", ()) or ()), logs=tuple(get("log", ()) or ()),
                      grad_accum=get("grad_accum"), num_workers=get("num_workers"), precision=get("precision"),
                      launcher=get("launcher"), hostfile=get("hostfile"), rules_dirs=tuple(get("rules", ()) or ()),
                      probe_dirs=tuple(get("probes", ()) or ()), output=get("output"), quiet=bool(get("quiet")),
                      cwd=os.getcwd())


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def command(args: argparse.Namespace) -> int:
    """Run the automatic diagnosis and write the report; exit code per design.md."""
    from troubleshooter.run.plan import check_paths, gather_static, run_probes
    from troubleshooter.run.session import Session

    opts = run_options(args)
    rules = load_rules(list(opts.rules_dirs))
    registry = Registry.load(list(opts.probe_dirs))
    if under_launcher(os.environ):
        from troubleshooter.distributed import run_distributed
        doc = run_distributed(opts, rules, registry)
        return finish(doc, args) if doc is not None else 0
    check_paths([*opts.scripts, *opts.logs])
    session = Session(rules, "auto")
    listener = terminal_lines(not opts.quiet and opts.output != "-" and sys.stderr.isatty())  # for people, not logs
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)  # schedulers cancel with SIGTERM
    try:
        gather_static(session, opts)
        run_probes(session, registry, opts, listener)
    except KeyboardInterrupt:
        session.interrupted = True
        print("troubleshoot: interrupted; writing a partial report", file=sys.stderr)
    finally:
        signal.signal(signal.SIGTERM, previous)
    return finish(session.report(), args, interrupted=session.interrupted)


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
