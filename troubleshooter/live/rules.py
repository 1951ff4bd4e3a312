"""Load and validate ``rules/live/``: frame activities and stack pictures (launchers: the launcher table).

Each rules directory (the shipped one, then ``--rules`` overlays) may hold ``live/frames.yaml`` and
``live/pictures.yaml``; launchers (command-line patterns, rank variables) come from the launcher table
``launchers.yaml`` (:mod:`troubleshooter.core.launchers`). Overlay entries are tried before shipped ones.
Every problem is reported with file and line (all at once, as a RuleFileError).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from troubleshooter.core.errors import IssueCollector, RuleFileError
from troubleshooter.core.launchers import LauncherTable, load_table
from troubleshooter.core.paths import rules_dir
from troubleshooter.core.saferegex import regex_problem
from troubleshooter.core.yamlspan import SpanDict, load_yaml_file

ACTIVITY_KINDS = ("collective", "backward", "wait", "dataloader", "io", "teardown")
PICTURE_KINDS = (*ACTIVITY_KINDS, "compute", "idle", "exited")
RELATIONS = ("after-loop", "different-call", "any")
RANK_ENV_KEYS = ("rank", "local_rank", "world_size")


@dataclass(frozen=True)
class Launcher:
    """A launcher (its report name) recognised by a regex over the start of a command line."""

    id: str
    match: re.Pattern


@dataclass(frozen=True)
class Activity:
    """A frame pattern and what a rank whose stack matches it is doing."""

    kind: str
    label: str
    file: re.Pattern | None = None
    function: re.Pattern | None = None
    source: re.Pattern | None = None
    where: str = ""


@dataclass(frozen=True)
class Picture:
    """A split of the ranks between two groups that means a finding."""

    id: str
    finding: str
    waiting: tuple[str, ...]
    odd: tuple[str, ...]
    relation: str
    detail: str
    involves_async: bool = False


@dataclass
class LiveRules:
    """Everything ``rules/live/`` declares."""

    launchers: list[Launcher] = field(default_factory=list)
    rank_env: dict[str, list[str]] = field(default_factory=dict)
    activities: list[Activity] = field(default_factory=list)
    pictures: list[Picture] = field(default_factory=list)


def _regex(issues: IssueCollector, path: Path, entry: SpanDict, key: str) -> re.Pattern | None:
    value = entry.get(key)
    if value is None:
        return None
    problem = regex_problem(str(value))
    if problem:
        invalid = problem.startswith("bad regular expression")
        issues.add(path, entry.line_of(key), f"`{key}` is not a valid regular expression: {problem[24:]}" if invalid
                   else f"`{key}`: {problem}")
        return None
    return re.compile(str(value))


def _entries(issues: IssueCollector, path: Path, data: Any, key: str) -> list[SpanDict]:
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        issues.add(path, getattr(data, "line", 1) or 1, f"expected a mapping with a `{key}:` list")
        return []
    good = []
    for i, entry in enumerate(data[key]):
        if isinstance(entry, dict):
            good.append(entry)
        else:
            issues.add(path, data[key].line_of(i), f"{key}[{i}] must be a mapping")
    return good


def _require(issues: IssueCollector, path: Path, entry: SpanDict, keys: Iterable[str]) -> bool:
    missing = [k for k in keys if k not in entry]
    for k in missing:
        issues.add(path, entry.line, f"missing field `{k}`")
    return not missing


def _activities(issues: IssueCollector, path: Path, data: Any, out: LiveRules) -> None:
    for entry in _entries(issues, path, data, "activities"):
        if not _require(issues, path, entry, ("kind", "label")):
            continue
        if entry["kind"] not in ACTIVITY_KINDS:
            issues.add(path, entry.line_of("kind"), f"unknown kind {entry['kind']!r}",
                       f"expected one of {', '.join(ACTIVITY_KINDS)}")
            continue
        if not any(k in entry for k in ("file", "function", "source")):
            issues.add(path, entry.line, "an activity needs at least one of `file`, `function`, `source`")
            continue
        out.activities.append(Activity(entry["kind"], str(entry["label"]), _regex(issues, path, entry, "file"),
                                       _regex(issues, path, entry, "function"), _regex(issues, path, entry, "source"),
                                       f"{path}:{entry.line}"))


def _kinds(issues: IssueCollector, path: Path, entry: SpanDict, key: str) -> tuple[str, ...]:
    kinds = entry.get(key)
    if not isinstance(kinds, list) or not kinds or any(k not in PICTURE_KINDS for k in kinds):
        issues.add(path, entry.line_of(key), f"`{key}` must be a list of kinds", f"kinds: {', '.join(PICTURE_KINDS)}")
        return ()
    return tuple(kinds)


def _pictures(issues: IssueCollector, path: Path, data: Any, out: LiveRules, finding_ids: set[str]) -> None:
    for entry in _entries(issues, path, data, "pictures"):
        if not _require(issues, path, entry, ("id", "finding", "waiting", "odd", "relation", "detail")):
            continue
        if finding_ids and entry["finding"] not in finding_ids:
            issues.add(path, entry.line_of("finding"), f"unknown finding {entry['finding']!r}",
                       "use an id from rules/findings/")
            continue
        if entry["relation"] not in RELATIONS:
            issues.add(path, entry.line_of("relation"), f"unknown relation {entry['relation']!r}",
                       f"expected one of {', '.join(RELATIONS)}")
            continue
        waiting, odd = _kinds(issues, path, entry, "waiting"), _kinds(issues, path, entry, "odd")
        if waiting and odd:
            out.pictures.append(Picture(str(entry["id"]), str(entry["finding"]), waiting, odd, entry["relation"],
                                        str(entry["detail"]), bool(entry.get("involves_async", False))))


def read_live_rules(issues: IssueCollector, dirs: Iterable[Path], finding_ids: Iterable[str] = (),
                    table: LauncherTable | None = None) -> LiveRules:
    """Read ``live/*.yaml`` from each rules directory (overlays first in priority); problems go to ``issues``.

    Launchers come from the launcher ``table``. The knowledge loader calls this for ``RuleSet.live``.
    """
    out = LiveRules()
    known = set(finding_ids)
    loaders = (("frames.yaml", _activities),
               ("pictures.yaml", lambda *args: _pictures(*args, known)))
    for directory in reversed([Path(d) for d in dirs]):
        for name, loader in loaders:
            path = directory / "live" / name
            if not path.exists():
                continue
            unreadable = len(issues.issues)
            data = load_yaml_file(issues, path)
            if len(issues.issues) == unreadable:  # an empty file still gets "expected a mapping"
                loader(issues, path, data, out)
    if table is not None:
        out.launchers = [Launcher(l.name, l.process) for l in table.launchers if l.process is not None]
        out.rank_env = {key: list(table.variables(key)) for key in RANK_ENV_KEYS}
    return out


def load_live_rules(dirs: Iterable[Path], finding_ids: Iterable[str] = ()) -> LiveRules:
    """:func:`read_live_rules` on its own; raise RuleFileError on any problem."""
    issues = IssueCollector()
    table = load_table([d for d in dirs if Path(d).resolve() != rules_dir().resolve()])
    out = read_live_rules(issues, dirs, finding_ids, table)
    if issues.issues:
        raise RuleFileError(issues.issues)
    return out


def live_rules_for(rules: Any) -> LiveRules:
    """The live rules of a loaded RuleSet."""
    return rules.live
