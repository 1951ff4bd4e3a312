"""The launcher table (``rules/launchers.yaml``): which launcher started a process and the identity it handed over.

Every module that asks "is this a launched rank?", "which launcher?" or "which variable holds the
local rank?" reads this one table, so the TUI, ``--auto``, the probes and ``attach`` agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

from troubleshooter.core.errors import RuleFileError, RuleIssue

LOCAL_WORLD_VAR = "TROUBLESHOOTER_LOCAL_WORLD"  # set in the ranks of the troubleshooter's own local world
FIELDS = ("rank", "world_size", "local_rank", "local_world_size", "node_rank", "num_nodes")
TABLE_FILE = "launchers.yaml"
PER_NODE_RE = re.compile(r"^(\d+)(?:\(x(\d+)\))?$")


@dataclass(frozen=True)
class Launcher:
    """One launcher family of the table."""

    id: str
    name: str  # the report's world.launcher
    markers: tuple[str, ...]
    sets: tuple[str, ...]
    fields: dict[str, tuple[str, ...]] = field(default_factory=dict)
    per_node: tuple[str, ...] = ()
    process: re.Pattern | None = None
    min_world: int = 1  # smaller worlds are not a launched job (a SLURM batch shell is task 0 of 1)


@dataclass(frozen=True)
class LauncherTable:
    """Every launcher, most specific first, and torch's own ``env://`` variable names."""

    torch: dict[str, tuple[str, ...]]
    launchers: tuple[Launcher, ...]
    schedulers: dict[str, tuple[str, ...]]

    def get(self, launcher_id: str) -> Launcher | None:
        """The launcher with this id."""
        return next((l for l in self.launchers if l.id == launcher_id), None)

    def detect(self, env: Mapping[str, str]) -> list[str]:
        """Every launcher whose markers are present in ``env``, most specific first."""
        return [l.id for l in self.launchers if any(m in env for m in l.markers)]

    def variables(self, field_name: str) -> tuple[str, ...]:
        """Every variable that may hold ``field_name``: torch's first, then each launcher's, in table order."""
        names = list(self.torch.get(field_name, ()))
        for launcher in self.launchers:
            names += [n for n in launcher.fields.get(field_name, ()) if n not in names]
        return tuple(names)

    def all_variables(self) -> frozenset[str]:
        """Every variable the table names: torch's, each launcher's markers, sets, fields, and the schedulers'."""
        names = {n for group in self.torch.values() for n in group}
        for l in self.launchers:
            names.update(l.markers, l.sets, l.per_node, *l.fields.values())
        return frozenset(names.union(*self.schedulers.values()))

    def per_node_variables(self) -> frozenset[str]:
        """Variables holding compressed per-node lists."""
        return frozenset(n for l in self.launchers for n in l.per_node)

    def scheduler(self, env: Mapping[str, str]) -> str | None:
        """The batch scheduler whose allocation surrounds the process, if any."""
        return next((s for s, names in self.schedulers.items() if any(n in env for n in names)), None)

    def read(self, env: Mapping[str, str], field_name: str, names: Iterable[str] | None = None,
             node_rank: int | None = None) -> tuple[int | None, str | None]:
        """(value, variable) of the first of ``names`` (default: :meth:`variables`) holding an integer.

        A compressed per-node list counts when ``node_rank`` says which node's entry to take.
        """
        per_node = self.per_node_variables()
        for name in (self.variables(field_name) if names is None else names):
            if name not in env:
                continue
            value = per_node_count(env[name], node_rank) if name in per_node else as_int(env[name])
            if value is not None:
                return value, name
        return None, None

    def launched(self, env: Mapping[str, str]) -> bool:
        """True when ``env`` is one rank of a launched job: a launcher is detected and the world size is known.

        Never for the troubleshooter's own local world; never for a bare scheduler allocation (SLURM_JOB_ID).
        """
        return self.launch(env) is not None

    def launch(self, env: Mapping[str, str]) -> tuple[str, int] | None:
        """(launcher id, world size) when ``env`` is one rank of a launched job (see :meth:`launched`), else None."""
        kinds = self.detect(env)
        if not kinds or kinds[0] == "local":
            return None
        size_vars = [*self.torch.get("world_size", ()), *self.get(kinds[0]).fields.get("world_size", ())]
        size, _ = self.read(env, "world_size", size_vars)
        return None if size is None or size < self.get(kinds[0]).min_world else (kinds[0], size)

    def launcher_name(self, launcher_id: str) -> str:
        """The report's name for a launcher id (``openmpi`` -> ``mpirun``)."""
        found = self.get(launcher_id)
        return found.name if found else launcher_id


def as_int(text: str | None) -> int | None:
    """An integer variable's value, or None."""
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


def per_node_count(spec: str, node_rank: int | None) -> int | None:
    """SLURM's compressed tasks-per-node list ("2(x3),1"): the count on node ``node_rank`` (a plain "N": N)."""
    counts: list[int] = []
    for part in spec.split(","):
        match = PER_NODE_RE.match(part.strip())
        if not match:
            return None
        counts += [int(match.group(1))] * int(match.group(2) or 1)
    if len(counts) == 1:
        return counts[0]
    return counts[node_rank] if node_rank is not None and 0 <= node_rank < len(counts) else None


def _names(value: object, path: Path, line: int | None, where: str, issues: list[RuleIssue]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        issues.append(RuleIssue(str(path), line, f"{where} must be a list of variable names"))
        return ()
    return tuple(value)


def _fields(value: object, path: Path, line: int | None, where: str, issues: list[RuleIssue]) -> dict:
    if not isinstance(value, dict) or set(value) - set(FIELDS):
        issues.append(RuleIssue(str(path), line, f"{where} keys must be among {', '.join(FIELDS)}"))
        return {}
    return {k: _names(v, path, value.line_of(k), f"{where}.{k}", issues) for k, v in value.items()}


def parse_table(path: Path, issues: list[RuleIssue]) -> tuple[dict, list[Launcher], dict]:
    """One launchers.yaml: (torch fields, launchers, schedulers); problems go to ``issues`` with file:line."""
    from troubleshooter.core.yamlspan import YamlError, load_file

    try:
        data = load_file(path)
    except YamlError as exc:
        issues.append(RuleIssue(str(path), exc.line, exc.message))
        return {}, [], {}
    if not isinstance(data, dict) or set(data) - {"torch", "launchers", "schedulers"}:
        issues.append(RuleIssue(str(path), getattr(data, "line", 1), "expected a mapping with `launchers:` "
                                "(and optional `torch:`, `schedulers:`)"))
        return {}, [], {}
    torch = _fields(data.get("torch", {}), path, data.line_of("torch"), "torch", issues)
    schedulers = {k: _names(v, path, data["schedulers"].line_of(k), f"schedulers.{k}", issues)
                  for k, v in (data.get("schedulers") or {}).items()}
    launchers: list[Launcher] = []
    entries = data.get("launchers", [])
    if not isinstance(entries, list):
        issues.append(RuleIssue(str(path), data.line_of("launchers"), "`launchers` must be a list"))
        entries = []
    for i, entry in enumerate(entries):
        line = getattr(entry, "line", None)
        unknown = set(entry) - {"id", "name", "markers", "sets", "fields", "per_node", "process", "min_world"} \
            if isinstance(entry, dict) else {"?"}
        if unknown or not isinstance(entry.get("id"), str) or "markers" not in entry:
            issues.append(RuleIssue(str(path), line, f"launchers[{i}] needs `id` and `markers`" + (
                f"; unknown key(s) {', '.join(sorted(unknown))}" if unknown else "")))
            continue
        process = None
        if entry.get("process") is not None:
            from troubleshooter.core.saferegex import regex_problem

            problem = regex_problem(str(entry["process"]))
            if problem:
                issues.append(RuleIssue(str(path), entry.line_of("process"), f"`process`: {problem}"))
            else:
                process = re.compile(str(entry["process"]))
        where = f"launchers[{i}] ({entry['id']})"
        min_world = entry.get("min_world", 1)
        if not isinstance(min_world, int) or isinstance(min_world, bool) or min_world < 1:
            issues.append(RuleIssue(str(path), entry.line_of("min_world"), f"{where}.min_world must be an integer >= 1"))
            min_world = 1
        launchers.append(Launcher(
            entry["id"], str(entry.get("name", entry["id"])),
            _names(entry["markers"], path, entry.line_of("markers"), f"{where}.markers", issues),
            _names(entry.get("sets", []), path, entry.line_of("sets"), f"{where}.sets", issues),
            _fields(entry.get("fields", {}), path, entry.line_of("fields"), f"{where}.fields", issues),
            _names(entry.get("per_node", []), path, entry.line_of("per_node"), f"{where}.per_node", issues),
            process, min_world))
    return torch, launchers, schedulers


def load_table(dirs: Iterable[Path | str] = ()) -> LauncherTable:
    """The shipped table with each ``--rules`` directory's launchers.yaml over it; RuleFileError on any problem."""
    from troubleshooter.core.paths import rules_dir

    return _load(tuple(str(d) for d in dirs), str(rules_dir()))


@lru_cache(maxsize=8)
def _load(overlays: tuple[str, ...], base: str) -> LauncherTable:
    issues: list[RuleIssue] = []
    table = read_table([Path(d) for d in (base, *overlays)], issues)
    if issues:
        raise RuleFileError(issues)
    return table


def read_table(dirs: Iterable[Path], issues: list[RuleIssue]) -> LauncherTable:
    """The table of each directory's launchers.yaml, later directories over earlier ones (the knowledge
    loader calls this for ``RuleSet.launchers``); problems go to ``issues``."""
    torch: dict[str, tuple[str, ...]] = {}
    launchers: list[Launcher] = []
    schedulers: dict[str, tuple[str, ...]] = {}
    for directory in dirs:
        path = Path(directory) / TABLE_FILE
        if not path.exists():
            continue
        more_torch, more, more_schedulers = parse_table(path, issues)
        torch.update(more_torch)
        schedulers.update(more_schedulers)
        ids = {l.id for l in more}
        launchers = more + [l for l in launchers if l.id not in ids]  # overlays first, replacing same ids
    return LauncherTable(torch, tuple(launchers), schedulers)


def launcher_table() -> LauncherTable:
    """The shipped launcher table."""
    return load_table()


def under_launcher(env: Mapping[str, str]) -> bool:
    """True when this process is one rank of a launched job (not the troubleshooter's own local world)."""
    return launcher_table().launched(env)
