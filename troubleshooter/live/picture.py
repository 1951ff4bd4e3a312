"""Turn the ranks' stacks into a picture: what each rank does, groups by signature, odd ones out, findings.

A rank's *activity* comes from the first pattern of ``rules/live/frames.yaml`` that matches a
frame of its main thread. Its *call site* is the innermost frame of the user's own code (not
the standard library, not site-packages). Ranks with the same activity and call site form a
group; ``rules/live/pictures.yaml`` maps a split between groups to findings. The user's
source files are read (and parsed with ``ast`` to find loops), never imported or run.
"""

from __future__ import annotations

import ast
import os
import re
import sysconfig
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable

from troubleshooter.live.rules import Activity, LiveRules, Picture
from troubleshooter.live.stacks import Frame, StackDump

_LIBRARY_DIRS = tuple({os.path.realpath(p) + os.sep for p in (
    sysconfig.get_paths().get("stdlib", ""), sysconfig.get_paths().get("platstdlib", ""),
    sysconfig.get_paths().get("purelib", ""), sysconfig.get_paths().get("platlib", "")) if p})
_ASYNC_CALL = re.compile(r"async_op\s*=\s*True|\.wait\(\s*\)")
_ANY_STDLIB = re.compile(r"/lib(64)?/python\d[\d.]*/")  # another interpreter's standard library


def is_user_frame(frame: Frame) -> bool:
    """True for the user's own code: a real file outside the standard library and installed packages."""
    path = frame.file
    if not path or path.startswith("<") or not os.path.isabs(path):
        return path == "<string>" or path == "<stdin>"
    if "site-packages" in path or "dist-packages" in path or _ANY_STDLIB.search(path):
        return False
    return not os.path.realpath(path).startswith(_LIBRARY_DIRS)


@lru_cache(maxsize=64)
def _source_lines(path: str) -> tuple[str, ...]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return tuple(fh.read(2_000_000).splitlines())
    except OSError:
        return ()


def source_line(frame: Frame) -> str:
    """The text of the frame's line (empty when the file cannot be read)."""
    lines = _source_lines(frame.file)
    return lines[frame.line - 1].strip() if 0 < frame.line <= len(lines) else ""


@lru_cache(maxsize=64)
def _tree(path: str) -> ast.AST | None:
    text = "\n".join(_source_lines(path))
    try:
        return ast.parse(text) if text else None
    except (SyntaxError, ValueError):
        return None


def enclosing_loop(frame: Frame) -> tuple[int, int, int] | None:
    """(loop start, loop end, function start) of the innermost for/while loop around the frame's line."""
    tree = _tree(frame.file)
    if tree is None:
        return None
    best: tuple[int, int, int] | None = None

    def visit(node: ast.AST, func_start: int) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            start = getattr(child, "lineno", None)
            end = getattr(child, "end_lineno", None)
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if start and end and start <= frame.line <= end:
                    visit(child, start)
                continue
            if isinstance(child, (ast.For, ast.AsyncFor, ast.While)) and start and end and start <= frame.line <= end:
                best = (start, end, func_start)
            visit(child, func_start)

    visit(tree, 0)
    return best


def enclosing_function(frame: Frame) -> int:
    """First line of the innermost function around the frame's line (0: module level)."""
    tree = _tree(frame.file)
    found = 0
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= frame.line <= (
                    node.end_lineno or node.lineno) and node.lineno > found:
                found = node.lineno
    return found


@dataclass
class RankState:
    """What one rank is doing."""

    rank: int | None
    pid: int | None
    kind: str
    label: str
    call_site: Frame | None = None
    frames: list[Frame] = field(default_factory=list)
    active: bool = False
    error: str | None = None

    @property
    def where(self) -> str:
        """``file.py:LINE (function)`` of the user's call site."""
        if self.call_site is None:
            return "(no frame of your code)" if self.kind != "exited" else "(process gone)"
        return f"{self.call_site.short} ({self.call_site.function})"

    @property
    def signature(self) -> tuple:
        """Ranks with equal signatures are doing the same thing at the same place."""
        site = (self.call_site.file, self.call_site.line) if self.call_site else None
        return (self.kind, self.label, site)


def _matches(activity: Activity, frame: Frame, user: bool) -> bool:
    if activity.file and not activity.file.search(frame.file.replace(os.sep, "/")):
        return False
    if activity.function and not activity.function.search(frame.function):
        return False
    if activity.source and not (user and activity.source.search(source_line(frame))):
        return False
    return True


def classify(dump: StackDump, rules: LiveRules, rank: int | None) -> RankState:
    """The activity and call site of one rank from its stack dump."""
    if dump.gone:
        return RankState(rank, dump.pid, "exited", "process exited")
    main = dump.main
    if main is None:
        return RankState(rank, dump.pid, "unknown", "stack not readable", error=dump.error)
    frames = main.frames
    user_flags = [is_user_frame(f) for f in frames]
    call_site = next((f for f, u in zip(frames, user_flags) if u), None)
    for activity in rules.activities:
        for frame, user in zip(frames, user_flags):
            if _matches(activity, frame, user):
                return RankState(rank, dump.pid, activity.kind, activity.label.format(function=frame.function),
                                 call_site, frames, main.active)
    kind = "compute" if main.active else "idle"
    label = "running Python code" if main.active else "blocked outside Python (sleep, lock, C call)"
    return RankState(rank, dump.pid, kind, label, call_site, frames, main.active)


@dataclass
class Group:
    """Ranks sharing one signature."""

    state: RankState
    ranks: list[int]
    odd: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON form for the report."""
        return {"ranks": self.ranks, "kind": self.state.kind, "what": self.state.label, "where": self.state.where,
                "odd_one_out": self.odd,
                "frames": [f"{f.function} ({f.file}:{f.line})" for f in self.state.frames[:40]]}


def group_states(states: Iterable[RankState]) -> list[Group]:
    """Groups by signature, the largest first (ties: lowest rank first)."""
    groups: dict[tuple, Group] = {}
    for state in states:
        key = state.signature
        if key in groups:
            groups[key].ranks.append(state.rank if state.rank is not None else -1)
        else:
            groups[key] = Group(state, [state.rank if state.rank is not None else -1])
    return sorted(groups.values(), key=lambda g: (-len(g.ranks), min(g.ranks)))


def _user_frames(state: RankState) -> list[Frame]:
    return [f for f in state.frames if is_user_frame(f)]


def left_the_loop(waiting: RankState, odd: RankState) -> bool:
    """True when ``odd`` is past the end of a loop that holds ``waiting``'s call, in the same function."""
    for w in _user_frames(waiting):
        loop = enclosing_loop(w)
        if loop is None:
            continue
        start, end, func = loop
        for o in _user_frames(odd):
            if o.file == w.file and enclosing_function(o) == func and o.line > end:
                return True
    return False


def _involves_async(*states: RankState) -> bool:
    return any(s.kind == "wait" or (s.call_site and _ASYNC_CALL.search(source_line(s.call_site))) for s in states)


def _picture_holds(pic: Picture, waiting: Group, odd: Group) -> bool:
    if waiting.state.kind not in pic.waiting or odd.state.kind not in pic.odd:
        return False
    if pic.involves_async and not _involves_async(waiting.state, odd.state):
        return False
    if pic.relation == "after-loop":
        return left_the_loop(waiting.state, odd.state)
    if pic.relation == "different-call":
        return waiting.state.signature != odd.state.signature
    return True


def _ranks_text(ranks: list[int]) -> str:
    return ", ".join(str(r) for r in sorted(ranks))


def findings_from(groups: list[Group], rules: LiveRules) -> dict[str, list[dict]]:
    """Hit facts ``live.<finding-id>`` for the splits the pictures recognise; marks the odd groups."""
    hits: dict[str, list[dict]] = {}
    explained: set[int] = set()
    pairs = [(a, b) for a in range(len(groups)) for b in range(len(groups)) if a != b]
    for pic in rules.pictures:
        for a, b in pairs:
            if b in explained or a in explained:
                continue
            waiting, odd = groups[a], groups[b]
            if not _picture_holds(pic, waiting, odd):
                continue
            explained.add(b)
            odd.odd = True
            values = {"others": _ranks_text(waiting.ranks), "other_what": waiting.state.label,
                      "other_where": waiting.state.where, "what": odd.state.label, "where": odd.state.where}
            for rank in sorted(odd.ranks):
                hits.setdefault(f"live.{pic.finding}", []).append({
                    "detail": pic.detail.format(rank=rank, **values), "rank": rank, "source": "attach",
                    "order": 0, "vars": {"picture": pic.id, "odd_ranks": sorted(odd.ranks),
                                         "waiting_ranks": sorted(waiting.ranks), **values}})
    return hits
