"""Distributed ``--auto``: every process started by torchrun / srun / mpirun / deepspeed is a rank.

Each process supervises one rank child (``rank.py``), then hands its payload to rank 0 through
a store the diagnosis hosts itself (``exchange.py``); rank 0 merges them into one report
(``merge.py``). A process whose launcher variables contradict each other (an error finding from
the launcher probe alone) does not join: it reports that at once. A rank that cannot reach rank 0
writes its own partial report next to the output path (``<output>.rank<N>.json``). Only rank 0
prints, unless TROUBLESHOOTER_VERBOSE_RANKS=1. See docs/DISTRIBUTED.md for the design and its reasons.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from troubleshooter.core.facts import FactSpec
from troubleshooter.run.events import RunEvent
from troubleshooter.run.options import RunOptions

JOIN_TIMEOUT_S = 60.0
VERBOSE_VAR = "TROUBLESHOOTER_VERBOSE_RANKS"


def fact_specs(rules: Any = None) -> list[FactSpec]:
    """Facts distributed mode adds: cross-rank comparisons (``ranks.*``, ``nodes.*``) and per-rank ``job.*``."""
    specs = [FactSpec("ranks.env_disagreeing", "list", "Job-wide variables (WORLD_SIZE, MASTER_*, NCCL_*, GLOO_*, "
                      "TORCH_NCCL_*, TORCH_DISTRIBUTED_*) whose value differs between ranks"),
             FactSpec("ranks.env_values", "dict", "Variable -> {value: [ranks]} for the disagreeing variables"),
             FactSpec("ranks.duplicate_claims", "list", "Ranks claimed by more than one process"),
             FactSpec("ranks.out_of_range", "list", "Ranks claimed by a process that are not below the world size"),
             FactSpec("ranks.undelivered", "list", "Ranks that checked in with rank 0 but never sent results"),
             FactSpec("ranks.local_step_s", "dict", "Rank -> median no_sync step time (its own compute), seconds"),
             FactSpec("ranks.slowest_rank", "int", "Rank with the largest no_sync step time"),
             FactSpec("nodes.step_ratio", "dict", "Host -> its ranks' mean no_sync step time / the median host's"),
             FactSpec("nodes.slowest_host", "str", "Host with the largest step-time ratio"),
             FactSpec("job.node_step_ratio", "float", "This rank's node step time divided by the median node's"),
             FactSpec("job.exchange_error", "str", "Why this rank could not hand its results to rank 0")]
    for name, doc in (("python_version", "Python version"), ("torch_version", "torch version"),
                      ("cuda_version", "CUDA version torch was built with ('none' for CPU builds)"),
                      ("nccl_version", "NCCL version"), ("world_size", "WORLD_SIZE each rank used"),
                      ("master_port", "MASTER_PORT each rank used"), ("master_addr", "MASTER_ADDR each rank used")):
        specs += [FactSpec(f"ranks.{name}s", "dict", f"{doc} -> [ranks]"),
                  FactSpec(f"ranks.{name}_count", "int", f"Number of distinct values of: {doc}")]
    return specs


def run_distributed(opts: RunOptions, rules: Any, registry: Any) -> dict | None:
    """This process's part of a launched diagnosis: rank 0 returns the report to write, the others None.

    A rank that cannot deliver to rank 0 writes its own partial report beside ``opts.output`` and returns None.
    """
    from troubleshooter.distributed.exchange import Exchange, ExchangeError
    from troubleshooter.distributed.identity import derive, launcher_result
    from troubleshooter.distributed.merge import JobSession, build_session
    from troubleshooter.distributed.rank import run_rank
    from troubleshooter.run.events import terminal_lines
    from troubleshooter.run.local_world import supervision_limit
    from troubleshooter.run.plan import gather_static, make_plan

    opts.validate()
    user_env = dict(os.environ)
    refused = _refused_identity(rules, launcher_result(user_env, registry))
    if refused is not None:
        return refused
    ident = derive(user_env, registry)
    join_timeout = float(opts.timeout_s or JOIN_TIMEOUT_S)
    speaks = ident.rank == 0 or user_env.get(VERBOSE_VAR) == "1"
    listener = terminal_lines(speaks and not opts.quiet and opts.output != "-")
    started = time.monotonic()
    exchange = Exchange(ident.master_addr, ident.master_port + 1, ident.rank, join_timeout)
    exchange.start()
    session = JobSession(rules, "auto")
    if ident.rank == 0:
        gather_static(session, opts)
    listener(RunEvent("note", f"rank {ident.rank} of {ident.world_size} ({ident.launcher}), rendezvous at "
                              f"{ident.master_addr}:{ident.master_port}"))
    plan = make_plan(registry, opts, local_world=False)
    payload = run_rank(ident, plan, opts, user_env, join_timeout, listener)
    if ident.rank != 0:
        try:
            exchange.publish(payload)
            return None
        except ExchangeError as exc:
            _own_results_only(session, payload, ident, str(exc))
            _partial_report(session, ident, opts, str(exc))
            return None
    if exchange.store is None:  # rank 0 could not host the store: report what this rank saw
        _own_results_only(session, payload, ident, exchange.error or "")
        return session.report()
    bound = supervision_limit(plan.timeouts, join_timeout)
    listener(RunEvent("note", f"collecting results from {ident.world_size} ranks"))
    payloads, claims = exchange.collect(ident.world_size, join_deadline=started + join_timeout + 5,
                                        result_deadline=started + join_timeout + bound, have={0: payload})
    build_session(session, payloads, claims, ident.world_size, ident.launcher)
    return session.report()


def _refused_identity(rules: Any, launch: Any) -> dict | None:
    """The report to write instead of joining when the launcher's variables alone already yield an error finding
    (the rules in ``rules/checks/`` over the launcher probe, e.g. RANK >= WORLD_SIZE): no rendezvous can form with
    that identity, so waiting for the store would only end in a timeout. None when the identity is usable."""
    from troubleshooter.distributed.merge import JobSession

    session = JobSession(rules, "auto")
    session.add_result(launch)
    if not any(finding.severity == "error" for finding in session.findings()):
        return None
    session.extra["not_joined"] = "the launcher environment is inconsistent: this process did not join the diagnosis"
    print("troubleshoot: the launcher environment is inconsistent; not joining the other ranks", file=sys.stderr)
    return session.report()


def _own_results_only(session: Any, payload: dict, ident: Any, why: str) -> None:
    """Fill ``session`` from this rank's payload alone (it cannot know which other ranks joined)."""
    from troubleshooter.distributed.merge import build_session

    build_session(session, {ident.rank: payload}, {ident.rank: 1}, ident.world_size, ident.launcher)
    for key in ("world.missing_ranks", "ranks.undelivered"):
        session.run_facts.pop(key, None)
    session.run_facts["job.exchange_error"] = why
    session.extra.update({"partial": True, "partial_rank": ident.rank})


def _partial_report(session: Any, ident: Any, opts: RunOptions, why: str) -> None:
    """Write this rank's own report beside the output path (the launcher must not kill the others: exit 0)."""
    from troubleshooter.report.document import emit

    base = opts.output if opts.output and opts.output != "-" else "troubleshoot-report"
    path = f"{base}.rank{ident.rank}.json"
    emit(session.report(), "json", path)
    print(f"troubleshoot: rank {ident.rank}: {why}; partial report written to {path}", file=sys.stderr)
