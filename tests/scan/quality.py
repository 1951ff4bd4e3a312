"""Scanner quality: precision/recall per finding id, and the checks on the real corpora.

Corpora (see ``tests/real/``):

* ``tests/scan/corpus`` - the project's own scripts: a regression suite, not evidence;
* ``tests/real/buggy`` - bug-report scripts rewritten in our code, ``# expect:`` / ``# source:`` headers;
* ``tests/real/constructs`` - our minimal scripts of constructs found in real correct files (no warning);
* ``tests/real/scripts/manifest.yaml`` - real correct files at pinned commits, read from a local cache.

On the real corpora "found" means what a user sees: findings of severity warning or error after the
rules evaluate the scan facts (the CLI's exit code). The self-written corpus keeps its historic measure
(every scanner hit).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from tests.real.split import split_of
from tests.scan.conftest import corpus_files, expected_ids

from troubleshooter.core.engine import Observations, evaluate
from troubleshooter.core.facts import Facts
from troubleshooter.core.ruleset import load_rules
from troubleshooter.scan import checker_ids, scan_paths

REAL = Path(__file__).resolve().parent.parent / "real"
BUGGY = REAL / "buggy"
CONSTRUCTS = REAL / "constructs"
MANIFEST = REAL / "scripts" / "manifest.yaml"
SHOWN = ("error", "warning")


def header(path: Path, key: str) -> str | None:
    """The value of a ``# key: value`` header line of a corpus script (None when absent)."""
    match = re.search(rf"^#\s*{re.escape(key)}:[ \t]*(.*)$", path.read_text(encoding="utf-8"), re.MULTILINE)
    return match.group(1).strip() if match else None


def expected_of(path: Path) -> set[str]:
    """The ids of a real-corpus script's ``# expect:`` header (empty after the colon: none)."""
    value = header(path, "expect")
    if value is None:
        raise AssertionError(f"{path}: missing '# expect:' header")
    return {part.strip() for part in value.split(",") if part.strip()}


def in_split(source: str, split: str) -> bool:
    """True when a source URL belongs to ``split`` (``all`` takes everything)."""
    return split == "all" or split_of(source) == split


def buggy_files(split: str = "all") -> list[Path]:
    """The rewritten bug-report scripts of a split (by their ``# source:`` URL)."""
    return [p for p in sorted(BUGGY.glob("*.py")) if in_split(header(p, "source") or "", split)]


def construct_items() -> list[Path]:
    """Construct scripts: each ``.py`` file, and each directory (a multi-file construct)."""
    return sorted(p for p in CONSTRUCTS.iterdir() if p.suffix == ".py" or (p.is_dir() and p.name != "__pycache__"))


def construct_main(item: Path) -> Path:
    """The file that carries the headers: the script itself, or ``main.py`` of a directory."""
    return item / "main.py" if item.is_dir() else item


@lru_cache(maxsize=1)
def _rules():
    return load_rules()


def shown_findings(paths: list[str]) -> tuple[dict[str, list[dict]], dict]:
    """(id -> scanner hits, all facts) for the findings a user would see (severity warning/error)."""
    facts = scan_paths(paths).facts
    findings = evaluate(_rules(), Observations(Facts.from_dict(facts, "scan")))
    shown = {f.id for f in findings if f.severity in SHOWN}
    hits = {ident: [h for h in facts.get(f"scan.{ident}") or [] if not isinstance(h, dict) or h.get("severity") != "info"]
            for ident in shown}
    return hits, facts


def found_ids(path: Path, shown: bool) -> set[str]:
    """Ids the scan of one script raises: every scanner hit, or (``shown``) only what a user sees."""
    if shown:
        return set(shown_findings([str(path)])[0])
    return set(scan_paths([str(path)]).hits)


def measure(files: list[Path] | None = None, shown: bool = False,
            truth_of=expected_ids) -> dict[str, dict[str, float]]:
    """id -> {tp, fp, fn, precision, recall} against the ``# expect:`` truth (file granularity).

    ``shown=False`` counts every scanner hit (the self-written corpus's historic measure);
    ``shown=True`` counts findings of severity warning/error only (what the real corpora measure).
    """
    tp, fp, fn = Counter(), Counter(), Counter()
    for path in corpus_files() if files is None else files:
        truth = truth_of(path)
        found = found_ids(path, shown)
        for ident in found & truth:
            tp[ident] += 1
        for ident in found - truth:
            fp[ident] += 1
        for ident in truth - found:
            fn[ident] += 1
    table = {}
    for ident in sorted(set(checker_ids()) | set(tp) | set(fp) | set(fn), key=_id_order):
        t, f, n = tp[ident], fp[ident], fn[ident]
        table[ident] = {"tp": t, "fp": f, "fn": n,
                        "precision": t / (t + f) if t + f else 1.0, "recall": t / (t + n) if t + n else 1.0}
    return table


def _id_order(ident: str) -> tuple[int, str]:
    ids = checker_ids()
    return (ids.index(ident), "") if ident in ids else (len(ids), ident)


def totals(table: dict[str, dict[str, float]]) -> dict[str, float]:
    """Micro-averaged tp/fp/fn/precision/recall over every id."""
    t = sum(r["tp"] for r in table.values())
    f = sum(r["fp"] for r in table.values())
    n = sum(r["fn"] for r in table.values())
    return {"tp": t, "fp": f, "fn": n, "precision": t / (t + f) if t + f else 1.0,
            "recall": t / (t + n) if t + n else 1.0}


def format_table(table: dict[str, dict[str, float]], only_seen: bool = False) -> str:
    """A Markdown table, plus the micro-averaged totals (``only_seen``: rows with some tp/fp/fn)."""
    lines = ["| id | TP | FP | FN | precision | recall |", "|---|---:|---:|---:|---:|---:|"]
    for ident, row in table.items():
        if only_seen and not (row["tp"] or row["fp"] or row["fn"]):
            continue
        lines.append(f"| {ident} | {row['tp']} | {row['fp']} | {row['fn']} | {row['precision']:.2f} | {row['recall']:.2f} |")
    a = totals(table)
    lines.append(f"| **all** | {a['tp']} | {a['fp']} | {a['fn']} | {a['precision']:.2f} | {a['recall']:.2f} |")
    return "\n".join(lines)


# --- real correct files (manifest + local cache) ---------------------------------------------

def manifest_entries(split: str = "all") -> list[dict]:
    """Manifest entries of a split (split by the repository URL)."""
    entries = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))["scripts"]
    return [e for e in entries if in_split(repo_url(e), split)]


def repo_url(entry: dict) -> str:
    """``https://github.com/<owner>/<repo>``: the source URL that decides an entry's split."""
    return f"https://github.com/{entry['repo']}"


def entry_paths(entry: dict, cache: Path) -> list[Path]:
    """Cached paths of an entry's file and its ``with:`` siblings (``<cache>/<owner>+<repo>/<commit>/...``)."""
    base = cache / entry["repo"].replace("/", "+") / entry["commit"]
    return [base / rel for rel in (entry["path"], *entry.get("with", []))]


@dataclass
class RealOutcome:
    """One real correct file scanned with its siblings."""

    entry: dict
    warnings: list[str] = field(default_factory=list)   # "id path:line" of every shown finding's hit
    distributed: bool = False                            # the scan's ``scan.uses_distributed``
    missing: bool = False                                # a file absent from the cache


def scan_real(entry: dict, cache: Path) -> RealOutcome:
    """Scan one manifest entry from the cache: shown findings anywhere in its files, and distributed-ness."""
    paths = entry_paths(entry, cache)
    out = RealOutcome(entry)
    if not all(p.is_file() for p in paths):
        out.missing = True
        return out
    hits, facts = shown_findings([str(p) for p in paths])
    base = paths[0].parents[len(Path(entry["path"]).parts) - 1]
    for ident, ident_hits in sorted(hits.items()):
        for hit in ident_hits or [{"path": str(paths[0]), "line": 0}]:
            out.warnings.append(f"{ident} {Path(hit['path']).relative_to(base)}:{hit['line']}")
    out.distributed = bool(facts.get("scan.uses_distributed"))
    return out
