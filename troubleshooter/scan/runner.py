"""Scan one file: parse, pre-filter, build the index once, run the checkers that apply."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from troubleshooter.scan.checkers import DISTRIBUTED_TRIGGERS, PROJECT_TRIGGERS, Checker
from troubleshooter.scan.inline import Expansion, Inliner, setup_words
from troubleshooter.scan.model import ModuleIndex, const
from troubleshooter.scan.patterns import Patterns
from troubleshooter.scan.project import FileLookups, Project, framework_entry_in, vendored_framework_of
from troubleshooter.scan.source import compiles, parse_python


@dataclass
class FileOutcome:
    """Hits of one file, or why it could not be parsed."""

    lines: int = 0
    hits: dict[str, list[dict]] = field(default_factory=dict)
    syntax_error: dict | None = None
    internal_errors: list[str] = field(default_factory=list)


@dataclass
class PendingFile:
    """A file indexed but not yet checked (the scan links all indexes first)."""

    outcome: FileOutcome
    path: str
    index: ModuleIndex | None = None
    shared: bool = False  # the project is distributed (set-up possibly elsewhere): no per-file pre-filter
    expansion: Expansion | None = None  # the file with the local helpers it calls inlined (lines to map back)


class FileScanner:
    """Runs the checkers over files and remembers what matters across files of one scan."""

    def __init__(self, checkers: list[Checker], patterns: Patterns):
        self.checkers = checkers
        self.P = patterns
        self.uses_distributed = False
        self.max_workers: int | None = None
        self._satisfied: set[str] = set()
        self._triggers = tuple({t for c in checkers for t in c.triggers} | {"num_workers"})
        # the same words in bytes (the utf-8 text holds an ASCII word exactly where the bytes do); None when a
        # trigger is not ASCII: then every file is parsed
        self._byte_triggers = tuple(t.encode() for t in self._triggers) if all(t.isascii() for t in self._triggers) \
            else None
        self.inliner = Inliner(setup_words(patterns))
        self.files = FileLookups()  # import resolution of files scanned without a project (a scan shares its own)

    def project_calls(self, key: str) -> bool:
        """True when some scanned file calls a name of pattern list ``key``."""
        return key in self._satisfied

    def scan(self, path: str, data: bytes, tree: ast.Module | SyntaxError | None = None,
             project: Project | None = None) -> FileOutcome:
        """Parse ``data`` (unless ``tree`` is given) and run the applicable checkers on this file alone."""
        out = self.check(self.index(path, data, tree, project))
        out.hits = {ident: one_per_place(found) for ident, found in out.hits.items()}
        return out

    def index(self, path: str, data: bytes, tree: ast.Module | SyntaxError | None = None,
              project: Project | None = None) -> "PendingFile":
        """Parse and index one file; ``project`` holds what the other files of the scan tell (set-up in a
        helper, a framework, rank predicates). Without one, the file is judged on its own."""
        pending = PendingFile(FileOutcome(lines=data.count(b"\n") + 1), path)
        if tree is None and project is None and self.tree_unread_alone(data) and compiles(data, path):
            return pending  # nothing below would read its tree: a syntax check is all it needs
        if tree is None:
            tree = parse(path, data)
        if isinstance(tree, SyntaxError):
            pending.outcome.syntax_error = {"path": path, "line": tree.lineno or 1, "detail": tree.msg}
            return pending
        # a scan reads the set-up helpers of every file on its distributed path; a file scanned without a project
        # (one library module after another) only when it is an entry point
        expansion = self.inliner.expand(path, data, tree, project.files) if project is not None else (
            self.inliner.expand(path, data, tree, self.files) if b"__main__" in data else None)
        if expansion is not None:
            if project is not None:
                project.adopt(tree, expansion.tree, expansion.added)
            pending.expansion, tree, text = expansion, expansion.tree, expansion.text
        else:
            text = data.decode("utf-8", errors="replace")
        pending.shared = project is not None and bool(project.raw_distributed or project.frameworks)
        if not any(t in text for t in self._triggers) and not (
                pending.shared and any(t in text for t in PROJECT_TRIGGERS)):
            return pending
        try:
            pending.index = ModuleIndex(tree, text, path, self.P, project)
        except RecursionError:
            pending.outcome.internal_errors.append(f"{path}: too deeply nested to analyse")
            return pending
        if pending.expansion is not None:
            pending.index.inlined = pending.expansion.added
        if project is None:
            pending.index.project = Project.of_index(pending.index)
        return pending

    def tree_unread_alone(self, data: bytes) -> bool:
        """Scanned alone, nothing would read this file's tree: no checker's trigger word (searched in the bytes) and
        no entry point (nothing to inline)."""
        return self._byte_triggers is not None and b"__main__" not in data and \
            not any(t in data for t in self._byte_triggers)

    def check(self, pending: "PendingFile") -> FileOutcome:
        """Run the checkers that apply to an indexed file (hits placed, not yet one per place: see
        :func:`one_per_place`)."""
        out, index, path = pending.outcome, pending.index, pending.path
        if index is None:
            return out
        project, text, shared = index.project, index.text, pending.shared
        self._record_project_facts(index)
        # a copy of a framework's entry class (a vendored HF Trainer) is that framework's code, whatever else the
        # project runs through (the framework's own sources start DeepSpeed too)
        vendored = vendored_framework_of(index)
        own_raw = any(t in text for t in DISTRIBUTED_TRIGGERS) and index.uses_ddp and not vendored
        # raw DDP elsewhere in the project (a vendored Trainer, the framework's own sources in its repository) does
        # not make a module that runs through a framework itself a raw-DDP one
        raw = own_raw or (project.raw_distributed and not framework_entry_in(index))
        distributed = raw or bool(project.frameworks)
        self.uses_distributed |= distributed
        for checker in self.checkers:
            if checker.distributed_only and not distributed:
                continue
            handled = checker.distributed_only and not raw and (
                checker.id in self.P.frameworks[vendored]["handles"] if vendored
                else project.handled_by_framework(checker.id))
            generic = shared and checker.triggers is DISTRIBUTED_TRIGGERS  # distributed through the project
            if not generic and not any(t in text for t in checker.triggers):
                continue
            try:
                run = checker.check_handled if handled else checker.check
                found = [h for h in run(index) if index.reachable(h.line)]
            except Exception as exc:  # one checker's bug must not lose the other findings
                out.internal_errors.append(f"{path}: checker {checker.id} failed: {type(exc).__name__}: {exc}")
                continue
            if found:
                out.hits[checker.id] = _placed(found, path, pending.expansion)
        return out

    def _record_project_facts(self, index: ModuleIndex) -> None:
        for checker in self.checkers:
            key = checker.satisfied_by
            if key and key not in self._satisfied and index.calls_named(getattr(self.P, key)):
                self._satisfied.add(key)
        for site in index.calls_named(self.P.dataloaders):
            workers = const(site.kw("num_workers"))
            if isinstance(workers, int) and not isinstance(workers, bool):
                self.max_workers = max(workers, self.max_workers or 0)


def _placed(found: list, path: str, expansion: Expansion | None) -> list[dict]:
    """The hit facts of a checker's hits, at the file and line of the code each one is about (a helper's own
    line for code inlined from it)."""
    out = []
    for h in found:
        where, line = expansion.place(path, h.line) if expansion is not None else (path, h.line)
        end = expansion.place(path, h.end_line)[1] if expansion is not None and h.end_line else h.end_line
        detail = expansion.placed_text(h.detail, path, where) if expansion is not None else h.detail
        out.append({"detail": detail, "path": where, "line": line, "vars": dict(h.vars), "order": line,
                    **({"end_line": end} if end else {}),
                    **({"stands": True} if h.stands_when_satisfied else {}),
                    **({"severity": h.severity} if h.severity else {})})
    return out


def one_per_place(found: list[dict]) -> list[dict]:
    """The first hit at each (file, line): a helper's code is judged in its own file and where a scanned file
    inlines it, and a helper's lines may be reached from several calls."""
    seen: set[tuple[str, int]] = set()
    out = []
    for hit in found:
        place = (hit["path"], hit["line"])
        if place not in seen:
            seen.add(place)
            out.append(hit)
    return out


def parse(path: str, data: bytes) -> ast.Module | SyntaxError:
    """The module's tree, or a SyntaxError whose ``msg`` says why it is not scanned."""
    try:
        return parse_python(data, path)
    except SyntaxError as exc:
        return SyntaxError(f"cannot parse: {exc.msg} (line {exc.lineno}); not scanned", (path, exc.lineno or 1, 0, ""))
    except (ValueError, RecursionError, MemoryError) as exc:
        return SyntaxError(f"cannot parse: {exc}; not scanned", (path, 1, 0, ""))
