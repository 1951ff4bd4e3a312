"""Static scanner: finds DDP pitfalls in training scripts by parsing them (never importing or running).

``scan_paths(paths)`` walks files and directories, parses each ``.py`` file with :mod:`ast`,
runs every checker (one per pitfall, ``troubleshooter/scan/checkers/``) over a shared index
(``model.py``), and returns hit facts ``scan.<finding-id>`` = list of
``{detail, path, line, vars, order}`` plus ``scan.files``, ``scan.syntax_errors``,
``scan.uses_distributed`` and ``scan.dataloader_workers``.
"""

from __future__ import annotations

import gc
import os
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator

from troubleshooter.core.facts import FactSpec

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "__pycache__", "node_modules", "site-packages", "dist-packages", "build", "dist",
    ".venv", "venv", "env", ".env", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs",
    ".ipynb_checkpoints",
})


@dataclass
class ScanResult:
    """What a scan found: the facts, plus files it could not read (exit code 2 for the command)."""

    facts: dict = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)
    lines: int = 0

    @property
    def hits(self) -> dict[str, list[dict]]:
        """finding id -> hits (only ids with at least one hit)."""
        return {k[5:]: v for k, v in self.facts.items()
                if k.startswith("scan.") and isinstance(v, list) and v and k != "scan.syntax_errors"}


def checker_ids() -> list[str]:
    """Every finding id a checker can emit."""
    from troubleshooter.scan.checkers import all_checkers
    return [c.id for c in all_checkers()]


def fact_specs(rules=None) -> list[FactSpec]:
    """The facts the scanner may produce (for the fact catalog and ``rules check``)."""
    specs = [FactSpec(f"scan.{ident}", "list", f"Static-scan hits of {ident} ({{detail, path, line, vars}})")
             for ident in checker_ids()]
    return specs + [
        FactSpec("scan.files", "int", "Python files the static scan parsed"),
        FactSpec("scan.syntax_errors", "list", "Files the static scan could not parse ({path, line, detail})"),
        FactSpec("scan.uses_distributed", "bool", "Some scanned file uses torch.distributed training "
                                                  "(init_process_group, DDP or DistributedSampler)"),
        FactSpec("scan.dataloader_workers", "int", "Largest literal DataLoader num_workers in the scanned files"),
    ]


def iter_python_files(paths: Iterable[str]) -> Iterator[tuple[str, bool]]:
    """(path, exists) for each file named or found under a named directory (common ignores skipped)."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")
                                 and not (Path(root) / d / "pyvenv.cfg").exists())
                for name in sorted(files):
                    if name.endswith(".py"):
                        yield os.path.join(root, name), True
        else:
            yield raw, path.exists()  # a FIFO or /dev/stdin is read like a file


@lru_cache(maxsize=1)
def shipped_patterns() -> Any:
    """The scanner patterns of the shipped rules, for callers without a loaded RuleSet (loaded once)."""
    from troubleshooter.core.ruleset import load_rules
    from troubleshooter.scan.patterns import patterns_for

    return patterns_for(load_rules(only=("scan",)))


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: a directory scan keeps every parsed tree alive (the project needs them
    all), and each automatic collection would walk all of them again (half the time of an 800-file scan)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def scan_paths(paths: list[str], rules: Any = None) -> ScanResult:
    """Scan files and directories with the patterns of ``rules`` (a loaded RuleSet; default: the shipped
    rules); a syntax error is recorded and the scan goes on."""
    with _no_cyclic_gc():
        return _scan_paths(paths, rules)


def _scan_paths(paths: list[str], rules: Any) -> ScanResult:
    from troubleshooter.scan.checkers import all_checkers
    from troubleshooter.scan.patterns import patterns_for
    from troubleshooter.scan.model import propagate_rank0
    from troubleshooter.scan.project import Project
    from troubleshooter.scan.runner import FileScanner, one_per_place

    patterns = patterns_for(rules) if rules is not None else shipped_patterns()
    checkers = all_checkers()
    scanner = FileScanner(checkers, patterns)
    result = ScanResult()
    hits: dict[str, list[dict]] = {c.id: [] for c in checkers}
    syntax_errors: list[dict] = []
    sources: list[tuple[str, bytes]] = []
    for path, exists in iter_python_files(paths):
        if not exists:
            result.unreadable.append(f"{path}: no such file or directory")
            continue
        try:
            with open(path, "rb") as handle:
                sources.append((path, handle.read()))
        except OSError as exc:
            result.unreadable.append(f"{path}: {exc.strerror or exc}")
    files = _ScannedFiles(sources, scanner.tree_unread_alone)
    project = Project(patterns)
    scanner.files = project.files
    scanner.inliner.known = _InlinerView(files, project.files.real)
    scanner.inliner.names = {project.files.real(path): path for path in files.paths}
    on_path = project.distributed_path([(path, data, tree) for path, data, tree in files.entries()
                                        if not isinstance(tree, SyntaxError)], files.tree_of)
    helpers: list[str] = []
    for at, (path, data, tree) in enumerate(files.entries()):
        if not isinstance(tree, SyntaxError) and (on_path is None or project.key(path) in on_path) and \
                project.relevant(data):
            tree = files.tree(at)
            if not isinstance(tree, SyntaxError):
                helpers += project.add(path, tree)
    for helper in helpers:
        project.add_source(helper)
    # a module off the distributed path is judged on its own (project None: its own reachability, no shared set-up);
    # a module not parsed yet is then parsed only if a check reads its tree (else its syntax is checked)
    pending = []
    for at, (path, data) in enumerate(sources):
        shared = on_path is None or project.knows(path)
        pending.append(scanner.index(path, data, files.tree(at) if shared else files.trees[at],
                                     project if shared else None))
    propagate_rank0([p.index for p in pending if p.index is not None])
    for item in pending:
        outcome = scanner.check(item)
        result.lines += outcome.lines
        if outcome.syntax_error:
            syntax_errors.append(outcome.syntax_error)
        for ident, file_hits in outcome.hits.items():
            hits[ident].extend(file_hits)
        result.internal_errors += outcome.internal_errors
    for checker in checkers:
        if checker.satisfied_by and scanner.project_calls(checker.satisfied_by):
            hits[checker.id] = [h for h in hits[checker.id] if h.get("stands")]
        hits[checker.id] = one_per_place(hits[checker.id])  # after the filter: a standing hit keeps its place
    result.facts = {f"scan.{ident}": sorted(h, key=lambda x: (x["path"], x["line"])) for ident, h in hits.items()}
    result.facts.update({
        "scan.files": len(sources),
        "scan.syntax_errors": syntax_errors,
        # a file too plain for any checker is still part of a run distributed by the project's set-up or framework
        "scan.uses_distributed": scanner.uses_distributed or bool(project.raw_distributed or project.frameworks),
    })
    if scanner.max_workers is not None:
        result.facts["scan.dataloader_workers"] = scanner.max_workers
    return result



class _ScannedFiles:
    """The files of a directory scan: their bytes and trees, one tree per file. A file that no check reads the tree
    of when it is judged alone (no checker's trigger word, no entry point: most modules of a package) is parsed only
    when something asks for its tree (its imports may matter to the distributed path, the project summarises it,
    the set-up inliner reads it); the others at once."""

    def __init__(self, sources: list[tuple[str, bytes]], tree_unread_alone):
        from troubleshooter.scan.runner import parse

        self._parse = parse
        self.paths = [path for path, _ in sources]
        self.blobs = [data for _, data in sources]
        once = {path for path, n in Counter(self.paths).items() if n == 1}  # a file named twice is parsed twice
        self.trees = [None if path in once and tree_unread_alone(data) else parse(path, data) for path, data in sources]
        self._at = {path: at for at, path in enumerate(self.paths) if path in once}

    def entries(self) -> list[tuple[str, bytes, Any]]:
        """(path, bytes, tree or None when not parsed yet) of each file, in the scan's order."""
        return list(zip(self.paths, self.blobs, self.trees))

    def tree(self, at: int):
        """The tree of file number ``at`` (parsed now if it was not yet), or its SyntaxError."""
        tree = self.trees[at]
        if tree is None:
            tree = self.trees[at] = self._parse(self.paths[at], self.blobs[at])
        return tree

    def tree_of(self, path: str):
        """The tree of the file the scan names ``path`` (one it did not parse at once: named once)."""
        return self.tree(self._at[path])


class _InlinerView(dict):
    """The scan's files as the set-up inliner reads them (resolved path -> (bytes, tree)); a tree is built when asked
    for. (The inliner drops a file it expands in place: ``pop``.)"""

    def __init__(self, files: _ScannedFiles, real):
        super().__init__((real(path), at) for at, path in enumerate(files.paths))
        self._files = files

    def get(self, key, default=None):
        at = super().get(key)
        return default if at is None else (self._files.blobs[at], self._files.tree(at))
