"""Precision and recall of the scanner per finding id over the corpus (file granularity)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.scan.conftest import corpus_files, expected_ids

from troubleshooter.scan import checker_ids, scan_paths


def measure(files: list[Path] | None = None) -> dict[str, dict[str, float]]:
    """id -> {tp, fp, fn, precision, recall} against the ``# expect:`` truth (todo-misses count as misses)."""
    tp, fp, fn = Counter(), Counter(), Counter()
    for path in files or corpus_files():
        truth = expected_ids(path)
        found = set(scan_paths([str(path)]).hits)
        for ident in found & truth:
            tp[ident] += 1
        for ident in found - truth:
            fp[ident] += 1
        for ident in truth - found:
            fn[ident] += 1
    table = {}
    for ident in checker_ids():
        t, f, n = tp[ident], fp[ident], fn[ident]
        table[ident] = {"tp": t, "fp": f, "fn": n,
                        "precision": t / (t + f) if t + f else 1.0, "recall": t / (t + n) if t + n else 1.0}
    return table


def format_table(table: dict[str, dict[str, float]]) -> str:
    """A Markdown table, plus the micro-averaged totals."""
    lines = ["| id | TP | FP | FN | precision | recall |", "|---|---:|---:|---:|---:|---:|"]
    for ident, row in table.items():
        lines.append(f"| {ident} | {row['tp']} | {row['fp']} | {row['fn']} | {row['precision']:.2f} | {row['recall']:.2f} |")
    t = sum(r["tp"] for r in table.values())
    f = sum(r["fp"] for r in table.values())
    n = sum(r["fn"] for r in table.values())
    lines.append(f"| **all** | {t} | {f} | {n} | {t / (t + f) if t + f else 1:.2f} | {t / (t + n) if t + n else 1:.2f} |")
    return "\n".join(lines)
