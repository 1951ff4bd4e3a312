"""The one way probes run: a plan (which probes, placed by scope, with their timeouts), then ``run_probes``.

``--auto``, ``probe NAME`` and the TUI call :func:`run_probes` (NODE probes here, each isolated;
RANK/WORLD probes in a local world of ``nproc`` ranks); distributed mode runs the same plan's
share inside each launched process. :func:`gather_static` adds scanned scripts and analysed logs.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from troubleshooter.core.errors import UsageError
from troubleshooter.core.launchers import launcher_table
from troubleshooter.core.probe import NODE, RANK, Probe, ProbeResult
from troubleshooter.core.registry import Registry
from troubleshooter.run.events import Listener, RunEvent, ignore
from troubleshooter.run.job import Job
from troubleshooter.run.options import RunOptions
from troubleshooter.run.session import Session, sort_results
from troubleshooter.run.world_info import WorldInfo


@dataclass(frozen=True)
class Plan:
    """Selected probes placed by scope, and the timeout each runs under."""

    here: tuple[type[Probe], ...]  # NODE probes (and see make_plan) run in this process's children, each isolated
    in_rank0: tuple[type[Probe], ...]  # NODE probes that import torch: run in local rank 0 before it joins
    ranked: tuple[type[Probe], ...]  # RANK and WORLD probes: every rank runs them
    timeouts: dict[str, float]  # probe id -> seconds (--timeout overrides each probe's own)

    @property
    def node(self) -> tuple[type[Probe], ...]:
        """Every NODE probe, wherever it runs."""
        return self.here + self.in_rank0

    def rank_job(self, opts: RunOptions, facts: Mapping[str, Any], probe_env: Mapping[str, str],
                 init_timeout_s: float = 60.0) -> Job:
        """The job a rank worker runs for this plan."""
        return Job(list(opts.probe_dirs), opts.probe_options(), dict(facts), dict(self.timeouts), dict(probe_env),
                   probes=[p.id for p in self.ranked], node_probes=[p.id for p in self.in_rank0],
                   backend=opts.backend, needs_world=any(p.scope == "world" for p in self.ranked),
                   init_timeout_s=init_timeout_s)


def make_plan(registry: Registry, opts: RunOptions, probe_ids: Iterable[str] | None = None,
              local_world: bool = True, launched_env: bool = False) -> Plan:
    """Select (``probe_ids``, else ``opts.only`` or every default probe, minus ``opts.skip``) and place.

    In a ``local_world``, NODE probes that import torch go to its rank 0 (which imports torch anyway:
    one import saved, 1-3 s here); under a launcher every NODE probe runs beside the rank. When this
    process carries a launcher's variables (``launched_env``) but runs a local world anyway (``probe
    NAME``, the TUI), RANK probes that need no process group run here, judging those variables: a
    local world would replace them with its own.
    """
    selected = [registry.get(p) for p in probe_ids] if probe_ids is not None else \
        registry.select(opts.only, opts.skip, opts.probe_options())
    here_too = [p for p in selected if p.scope == RANK and not {"torch", "process_group"} & set(p.needs)] \
        if launched_env and local_world else []
    ranked = tuple(p for p in selected if p.scope != NODE and p not in here_too)
    in_rank0 = tuple(p for p in selected if p.scope == NODE and "torch" in p.needs) if ranked and local_world else ()
    here = tuple(p for p in selected if p.scope == NODE and p not in in_rank0) + tuple(here_too)
    return Plan(here, in_rank0, ranked, {p.id: float(opts.timeout_s or p.timeout_s) for p in selected})


def run_probes(session: Session, registry: Registry, opts: RunOptions, listener: Listener = ignore,
               cancel: threading.Event | None = None, probe_ids: Iterable[str] | None = None,
               facts: Mapping[str, Any] | None = None) -> None:
    """Run the plan without a launcher; results land in ``session`` as they arrive, world facts at the end.

    ``facts`` are what the probes may read (default: the scan/log facts already in ``session``).
    """
    from troubleshooter.run.local_world import run_world
    from troubleshooter.run.node_runner import run_node_probes

    opts.validate()
    launch = launcher_table().launch(os.environ)  # this process carries a launcher's variables
    plan = make_plan(registry, opts, probe_ids, launched_env=launch is not None)
    known = dict(facts) if facts is not None else {f.key: f.value for f in session.extra_facts}
    if plan.ranked:
        session.world.update(WorldInfo(size=opts.nproc, launcher="local", nodes=1))
    elif launch:
        session.world.update(WorldInfo(size=launch[1], launcher=launcher_table().launcher_name(launch[0])))
    elif probe_ids is None:
        session.world.update(WorldInfo(size=1, launcher="local", nodes=1))
    session.run_facts.update(opts.facts())

    def on_done(result: ProbeResult) -> None:
        session.add_result(result)
        listener(RunEvent("result", result=result))

    node_thread = threading.Thread(target=run_node_probes, kwargs=dict(
        probes=list(plan.here), env=dict(os.environ), options=opts.probe_options(), facts=known,
        probe_dirs=opts.probe_dirs, timeouts=plan.timeouts, on_done=on_done, cancel=cancel), daemon=True)
    node_thread.start()
    try:
        if plan.ranked:
            listener(RunEvent("note", f"starting a local world of {opts.nproc} rank(s) for: "
                                      f"{', '.join(p.id for p in plan.ranked)}"))

            def on_event(rank: int, event: dict) -> None:
                listener(RunEvent("rank", rank=rank, data=event))
                if event["event"] == "probe-end":
                    on_done(ProbeResult.from_dict(event["result"]))
                elif event["event"] == "init-done" and rank == 0:
                    listener(RunEvent("note", f"world joined ({event.get('backend')}) in "
                                              f"{event.get('seconds', 0):.2f} s"))

            outcome = run_world(plan.rank_job(opts, known, dict(os.environ)), opts.nproc, on_event=on_event,
                                cancel=cancel)
            session.world.update(WorldInfo(backend=outcome.backend))
            session.run_facts.update(outcome.teardown_facts)
            recorded = {(r.probe, r.rank) for r in session.results}
            for results in outcome.results.values():  # timeouts synthesised by the supervisor
                for result in results:
                    if (result.probe, result.rank) not in recorded:
                        on_done(result)
            if outcome.teardown_facts:
                session.extra["rank_logs"] = {str(r): tail for r, tail in outcome.log_tails.items()}
    finally:
        node_thread.join()
    session.results[:] = sort_results(session.results)


def check_paths(paths: Iterable[str]) -> None:
    """A UsageError naming the first path that does not exist (``-`` is standard input)."""
    for path in paths:
        if path != "-" and not Path(path).exists():
            raise UsageError(f"{path}: no such file or directory")


def static_facts(scripts: Iterable[str], logs: Iterable[str], rules: Any) -> dict[str, dict[str, Any]]:
    """Scan ``scripts`` (parsed, never run) and analyse ``logs``: source ("scan", "logs") -> facts."""
    scripts, logs = list(scripts), list(logs)
    out: dict[str, dict[str, Any]] = {}
    if scripts:
        from troubleshooter.scan import scan_paths
        out["scan"] = dict(scan_paths(scripts, rules).facts)
    if logs:
        from troubleshooter.logs import analyze_paths
        out["logs"] = dict(analyze_paths(logs, rules).facts)
    return out


def gather_static(session: Session, opts: RunOptions) -> None:
    """Add the facts of ``opts.scripts`` and ``opts.logs`` to ``session``."""
    for source, facts in static_facts(opts.scripts, opts.logs, session.rules).items():
        session.add_facts(facts, source)


def analyze_files(paths: list[str], rules: Any) -> dict[str, dict[str, Any]]:
    """``*.py`` files and directories are scanned, other files analysed as logs: source -> facts.

    Raises FileNotFoundError naming a missing path, ImportError when the analyser is not in this build.
    """
    for path in paths:
        if not Path(path).exists():
            raise FileNotFoundError(f"{path}: no such file or directory")
    scripts = [p for p in paths if p.endswith(".py") or Path(p).is_dir()]
    return static_facts(scripts, [p for p in paths if p not in scripts], rules)
