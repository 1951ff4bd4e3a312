"""Scan one file: parse, pre-filter, build the index once, run the checkers that apply."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from troubleshooter.scan.checkers import DISTRIBUTED_TRIGGERS, Checker
from troubleshooter.scan.model import ModuleIndex, const
from troubleshooter.scan.patterns import Patterns


@dataclass
class FileOutcome:
    """Hits of one file, or why it could not be parsed."""

    lines: int = 0
    hits: dict[str, list[dict]] = field(default_factory=dict)
    syntax_error: dict | None = None
    internal_errors: list[str] = field(default_factory=list)


class FileScanner:
    """Runs the checkers over files and remembers what matters across files of one scan."""

    def __init__(self, checkers: list[Checker], patterns: Patterns):
        self.checkers = checkers
        self.P = patterns
        self.uses_distributed = False
        self.max_workers: int | None = None
        self._satisfied: set[str] = set()
        self._triggers = tuple({t for c in checkers for t in c.triggers} | {"num_workers"})

    def project_calls(self, key: str) -> bool:
        """True when some scanned file calls a name of pattern list ``key``."""
        return key in self._satisfied

    def scan(self, path: str, data: bytes) -> FileOutcome:
        """Parse ``data`` and run the applicable checkers."""
        out = FileOutcome(lines=data.count(b"\n") + 1)
        try:
            tree = ast.parse(data, filename=path)
        except SyntaxError as exc:
            out.syntax_error = {"path": path, "line": exc.lineno or 1,
                                "detail": f"cannot parse: {exc.msg} (line {exc.lineno}); not scanned"}
            return out
        except (ValueError, RecursionError, MemoryError) as exc:
            out.syntax_error = {"path": path, "line": 1, "detail": f"cannot parse: {exc}; not scanned"}
            return out
        text = data.decode("utf-8", errors="replace")
        if not any(t in text for t in self._triggers):
            return out
        try:
            index = ModuleIndex(tree, text, path, self.P)
        except RecursionError:
            out.internal_errors.append(f"{path}: too deeply nested to analyse")
            return out
        self._record_project_facts(index)
        distributed = any(t in text for t in DISTRIBUTED_TRIGGERS) and index.uses_ddp
        self.uses_distributed |= distributed
        for checker in self.checkers:
            if (checker.distributed_only and not distributed) or not any(t in text for t in checker.triggers):
                continue
            try:
                found = list(checker.check(index))
            except Exception as exc:  # one checker's bug must not lose the other findings
                out.internal_errors.append(f"{path}: checker {checker.id} failed: {type(exc).__name__}: {exc}")
                continue
            if found:
                out.hits[checker.id] = [
                    {"detail": h.detail, "path": path, "line": h.line, "vars": dict(h.vars), "order": h.line,
                     **({"end_line": h.end_line} if h.end_line else {})} for h in found]
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
