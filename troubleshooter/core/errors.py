"""Errors the tool reports to the user (never as a bare traceback)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


class TroubleshooterError(Exception):
    """A failure the user can act on; ``exit_code`` follows the CLI contract (2 bad input, 3 internal)."""

    exit_code = 3

    def __init__(self, message: str, title: str = "Troubleshooter could not finish"):
        super().__init__(message)
        self.message = message
        self.title = title


class UsageError(TroubleshooterError):
    """Bad command-line usage or an unreadable input file (exit code 2)."""

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(message, "Bad usage")


@dataclass
class RuleIssue:
    """One problem in one rule file, located by line, with a help hint and a breadcrumb."""

    path: str
    line: int | None
    message: str
    help: str = ""
    breadcrumb: str = ""
    excerpt: str = field(default="", repr=False)

    def render(self) -> str:
        """Render as ``error: ... --> path:line`` with the offending source line and help."""
        where = f"{self.path}:{self.line}" if self.line else self.path
        out = [f"error: {self.message}", f"  --> {where}"]
        if self.breadcrumb:
            out.append(f"  at {self.breadcrumb}")
        if self.excerpt:
            excerpt = self.excerpt if len(self.excerpt) <= 160 else f"{self.excerpt[:160]}… ({len(self.excerpt)} characters)"
            out.append(f"{self.line} | {excerpt}")
        if self.help:
            out.append(f"  = help: {self.help}")
        return "\n".join(out)


class RuleFileError(TroubleshooterError):
    """The knowledge base is invalid; carries every issue found across all files (exit code 2)."""

    exit_code = 2

    def __init__(self, issues: list[RuleIssue]):
        self.issues = issues
        text = "\n\n".join(issue.render() for issue in issues)
        files = len({i.path for i in issues})
        text += f"\n\n{len(issues)} error(s) in {files} rule file(s)"
        super().__init__(text, "Troubleshooter could not load its rules")


class IssueCollector:
    """Accumulates RuleIssues with source excerpts."""

    def __init__(self) -> None:
        self.issues: list[RuleIssue] = []
        self._lines: dict[str, list[str]] = {}

    def add(self, path: Path | str, line: int | None, message: str, help: str = "", breadcrumb: str = "") -> None:
        path = str(path)
        if path not in self._lines:
            try:
                self._lines[path] = Path(path).read_text(encoding="utf-8").splitlines()
            except OSError:
                self._lines[path] = []
        lines = self._lines[path]
        excerpt = lines[line - 1].rstrip() if line and 0 < line <= len(lines) else ""
        self.issues.append(RuleIssue(path, line, message, help, breadcrumb, excerpt))
