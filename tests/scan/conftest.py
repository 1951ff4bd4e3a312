"""Shared helpers for the scanner tests: the corpus and its declared expectations."""

from __future__ import annotations

import re
from pathlib import Path

CORPUS = Path(__file__).parent / "corpus"
_EXPECT = re.compile(r"^#\s*expect:\s*(.*)$", re.MULTILINE)
_TODO = re.compile(r"^#\s*todo-miss:\s*(.*)$", re.MULTILINE)


def corpus_files() -> list[Path]:
    """Every corpus script, sorted."""
    return sorted(CORPUS.glob("*.py"))


def expected_ids(path: Path) -> set[str]:
    """The ids a corpus script declares in its ``# expect:`` header (``none`` = empty)."""
    match = _EXPECT.search(path.read_text(encoding="utf-8"))
    if match is None:
        raise AssertionError(f"{path}: missing '# expect: ...' header")
    ids = {part.strip() for part in match.group(1).split(",") if part.strip()}
    return set() if ids == {"none"} else ids


def todo_misses(path: Path) -> set[str]:
    """Ids the script should raise but the scanner knowingly misses (``# todo-miss:``, a documented gap)."""
    match = _TODO.search(path.read_text(encoding="utf-8"))
    return {part.strip() for part in match.group(1).split(",") if part.strip()} if match else set()


def scan_ids(tmp_path: Path, code: str) -> set[str]:
    """Ids the scanner reports for ``code`` saved as one training script."""
    from troubleshooter.scan import scan_paths

    path = tmp_path / "train.py"
    path.write_text(code, encoding="utf-8")
    return set(scan_paths([str(path)]).hits)


def shown_ids(tmp_path: Path, code: str, **siblings: str) -> set[str]:
    """Ids a user would see (severity warning/error) for ``code`` saved as ``train.py``, scanned as one project with
    its ``siblings`` (module name -> source: ``dist_utils="..."`` becomes ``dist_utils.py``)."""
    from tests.scan.quality import shown_findings

    for name, text in {**siblings, "train": code}.items():
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    return set(shown_findings([str(p) for p in sorted(tmp_path.glob("*.py"))])[0])


def shows(tmp_path: Path, finding: str, code: str, **siblings: str) -> bool:
    """True when a user would see ``finding`` for ``code`` (and its sibling modules)."""
    return finding in shown_ids(tmp_path, code, **siblings)
