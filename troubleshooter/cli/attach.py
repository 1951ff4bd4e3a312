"""``troubleshoot attach [PID]``: every rank's stack, grouped by where it is, the odd ones out, findings."""

from __future__ import annotations

import argparse
import sys

from troubleshooter.live.attach import inspect_job, picture_text
from troubleshooter.live.discover import find_job
from troubleshooter.live.rules import live_rules_for


def command(args: argparse.Namespace) -> int:
    """Entry point of ``troubleshoot attach``."""
    from troubleshooter.report.render import render_terminal
    from troubleshooter.report.document import choose_format, emit, exit_code, write_output
    from troubleshooter.core.ruleset import load_rules
    from troubleshooter.run.session import Session
    from troubleshooter.run.world_info import WorldInfo

    rules = load_rules(getattr(args, "rules", None) or [])
    live_rules = live_rules_for(rules)
    job = find_job(live_rules, args.pid)
    facts, extra = inspect_job(job, live_rules, native=args.native)
    session = Session(rules, "attach")
    session.add_facts(facts, "attach")
    session.extra.update(extra)
    session.world = WorldInfo(size=job.world_size, launcher=job.launcher)
    doc = session.report()
    if choose_format(args.format, args.output, "text") == "json":
        emit(doc, "json", args.output)
    else:
        color = sys.stdout.isatty() and not args.output
        write_output(picture_text(extra["stacks"]) + "\n" + render_terminal(doc, color=color), args.output)
    return exit_code(doc)
