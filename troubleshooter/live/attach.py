"""Inspect a running job (``troubleshoot attach [PID]``): every rank's stack, grouped by where it is, the odd ones out, findings."""

from __future__ import annotations

import time
from typing import Any

import psutil

from troubleshooter.live import flight_recorder as fr
from troubleshooter.live.discover import Job
from troubleshooter.live.picture import RankState, classify, findings_from, group_states
from troubleshooter.live.rules import LiveRules
from troubleshooter.live.stacks import dump_all

DUMP_TIMEOUT_S = 10.0
FR_WAIT_S = 3.0


def _single_node(job: Job) -> bool:
    """True when every rank says the whole world runs on this node (LOCAL_WORLD_SIZE == WORLD_SIZE)."""
    sizes = {(r.env.get("LOCAL_WORLD_SIZE"), r.env.get("WORLD_SIZE")) for r in job.ranks}
    return len(sizes) == 1 and None not in next(iter(sizes)) and len({*next(iter(sizes))}) == 1


def _is_hit(key: str) -> bool:
    """Hit facts are ``live.<finding-id>`` (kebab-case); informational ones use snake_case."""
    return key.startswith("live.") and "-" in key


def _flight_recorder(job: Job, started: float) -> tuple[dict[str, Any], bool]:
    """Trigger live dumps where torch offers a pipe, read the dumps this job wrote (not older ones).

    Returns the facts and whether the ranks run with the flight recorder switched off.
    """
    if not job.ranks:
        return {}, False
    env = job.ranks[0].env
    facts: dict[str, Any] = {}
    pipes = fr.trigger_dumps(env, [r.rank for r in job.ranks if r.rank is not None])
    if pipes:
        facts["live.fr_pipes_triggered"] = pipes
        deadline = time.monotonic() + FR_WAIT_S
        while time.monotonic() < deadline and len(fr.find_dumps(fr.dump_prefix(env))) < len(pipes):
            time.sleep(0.2)
    facts.update(fr.read_dumps(fr.dump_prefix(env), since=started)[0])
    buffer = env.get("TORCH_FR_BUFFER_SIZE", env.get("TORCH_NCCL_TRACE_BUFFER_SIZE"))
    return facts, buffer == "0"


def inspect_job(job: Job, live_rules: LiveRules, native: bool = False,
                timeout_s: float = DUMP_TIMEOUT_S) -> tuple[dict[str, Any], dict[str, Any]]:
    """Facts (``live.*``) and the report's stack picture for ``job``."""
    dumps = dump_all([r.pid for r in job.ranks], native, timeout_s)
    states: list[RankState] = [classify(dumps[r.pid], live_rules, r.rank) for r in job.ranks]
    missing = job.missing_ranks() if _single_node(job) else []
    states += [RankState(rank, None, "exited", "not running any more") for rank in missing]
    readable = [s for s in states if s.kind != "unknown"]
    groups = group_states(readable)
    hits = findings_from(groups, live_rules)
    try:
        started = min(psutil.Process(r.pid).create_time() for r in job.ranks)
    except psutil.Error:  # a rank exited meanwhile: accept dumps of the last day
        started = time.time() - 86400
    fr_facts, fr_off = _flight_recorder(job, started)
    for key, items in fr_facts.items():
        if _is_hit(key):
            hits.setdefault(key, []).extend(items)
    by_rank = {r.rank: r for r in job.ranks}
    facts: dict[str, Any] = {
        "live.launcher": job.launcher,
        "live.ranks": [{"rank": s.rank, "pid": s.pid, "host": by_rank[s.rank].host if s.rank in by_rank else "",
                        "local_rank": by_rank[s.rank].local_rank if s.rank in by_rank else None,
                        "state": s.label, "kind": s.kind, "frame": s.where} for s in states],
        "live.groups": [g.to_dict() for g in groups],
        **{k: v for k, v in fr_facts.items() if not _is_hit(k)},
        **hits,
        "live.fr_buffer_off": fr_off,  # rules/checks/flight-recorder-off-in-live-hang.yaml decides with it
    }
    if job.world_size:
        facts["live.world_size"] = job.world_size
    if missing:
        facts["live.missing_ranks"] = missing
    unreadable = [s.rank for s in states if s.kind == "unknown"]
    if unreadable:
        facts["live.unreadable_ranks"] = unreadable
    extra = {"stacks": {
        "launcher": job.launcher, "launcher_pid": job.launcher_pid,
        "groups": [g.to_dict() for g in groups],
        "unreadable": [{"rank": s.rank, "pid": s.pid, "error": s.error} for s in states if s.kind == "unknown"],
    }}
    return facts, extra


def picture_text(stacks: dict[str, Any], max_frames: int = 12) -> str:
    """The stack picture as terminal text: one line per group, the odd ones marked, their frames below."""
    lines = [f"Job: {stacks.get('launcher', 'none')}" + (f" (PID {stacks['launcher_pid']})" if stacks.get("launcher_pid")
                                                          else "")]
    for group in stacks.get("groups", []):
        ranks = ", ".join(map(str, group["ranks"]))
        mark = "!" if group["odd_one_out"] else " "
        note = "   <- odd one out" if group["odd_one_out"] else ""
        lines.append(f" {mark} rank{'s' if len(group['ranks']) > 1 else ''} {ranks}: {group['what']} at {group['where']}"
                     f"{note}")
        for frame in group["frames"][:max_frames]:
            lines.append(f"       {frame}")
    for item in stacks.get("unreadable", []):
        lines.append(f" ? rank {item['rank']} (PID {item['pid']}): stack not readable: {item['error']}")
    return "\n".join(lines) + "\n"
