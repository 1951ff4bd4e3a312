"""``troubleshoot run -- LAUNCH...``: run a launch command under watch (live/watch.py) and report how it ended."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from troubleshooter.core.errors import TroubleshooterError, UsageError
from troubleshooter.live import flight_recorder as fr
from troubleshooter.live.attach import inspect_job
from troubleshooter.live.discover import find_job
from troubleshooter.live.rules import live_rules_for
from troubleshooter.live.watch import Outcome, Watcher, make_analyzer, root_failure


def command(args: argparse.Namespace) -> int:
    """Entry point of ``troubleshoot run``."""
    from troubleshooter.report.document import emit, exit_code
    from troubleshooter.core.ruleset import load_rules
    from troubleshooter.run.session import Session
    from troubleshooter.run.world_info import WorldInfo

    launch = list(args.launch or [])
    if launch and launch[0] == "--":
        launch = launch[1:]
    if not launch:
        raise UsageError("nothing to run: put the launch command after --, "
                         "e.g. troubleshoot run -- torchrun --nproc_per_node=2 train.py")
    if args.stall <= 0:
        raise UsageError(f"--stall must be a positive number of seconds, got {args.stall:g}")
    rules = load_rules(getattr(args, "rules", None) or [])
    live_rules = live_rules_for(rules)
    log_path = Path(args.log_file or "troubleshoot-run.log")
    fr_prefix = str(log_path.with_name(log_path.name + ".fr") / "nccl_trace_rank_")
    Path(fr_prefix).parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **fr.fr_environment(fr_prefix, dict(os.environ))}
    fr_prefix = fr.dump_prefix(env)
    started_wall = time.time()

    def on_stall(pid: int, outcome: Outcome) -> None:
        print(f"troubleshoot: no output and no CPU progress for {args.stall:g}s: attaching to the job",
              file=sys.stderr, flush=True)
        try:
            job = find_job(live_rules, pid)
            outcome.attach_facts, outcome.attach_extra = inspect_job(job, live_rules)
        except TroubleshooterError as exc:
            outcome.attach_error = exc.message

    analyzer = make_analyzer(rules)
    outcome = Watcher(launch, env, log_path, args.stall, analyzer, on_stall).run()

    session = Session(rules, "run")
    log_facts = analyzer.facts() if analyzer is not None else {}
    session.add_facts(log_facts, "logs")
    session.add_facts(outcome.attach_facts, "attach")
    run_facts: dict[str, Any] = {"live.exit_code": outcome.exit_code, "live.stalled": outcome.stalled,
                                 "live.stall_s": float(args.stall), "live.interrupted": outcome.interrupted,
                                 "live.duration_s": round(outcome.duration_s, 3)}
    if not outcome.attach_facts:
        run_facts.update(fr.read_dumps(fr_prefix, since=started_wall)[0])
    session.add_facts({k: v for k, v in run_facts.items() if v is not None}, "run")
    session.extra.update(outcome.attach_extra)
    session.extra["run"] = {
        "command": launch, "exit_code": outcome.exit_code, "log_file": str(log_path),
        "stalled": outcome.stalled, "stopped_by_troubleshoot": outcome.stopped_by_us,
        "interrupted": outcome.interrupted, "duration_s": round(outcome.duration_s, 3),
        "flight_recorder_prefix": fr_prefix, "attach_error": outcome.attach_error,
        "root_failure": root_failure(log_facts, log_path),
        "analyzer": "on" if analyzer is not None else "unavailable (troubleshooter.logs not installed)",
    }
    session.interrupted = outcome.interrupted
    session.world = WorldInfo(size=outcome.attach_facts.get("live.world_size"),
                              launcher=outcome.attach_facts.get("live.launcher"))
    doc = session.report()
    emit(doc, args.format, args.output, default="md")
    return 130 if outcome.interrupted else exit_code(doc)
