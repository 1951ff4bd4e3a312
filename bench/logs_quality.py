"""Precision and recall per finding id of the log analyzer over the test corpus.

Each ``tests/logs/corpus/<name>.log[.gz]`` has a sidecar ``<name>.expect.yaml`` with the
ids the log must raise and its root cause. Prints a Markdown table (one row per id) and
the root-cause accuracy. Usage: ``python bench/logs_quality.py [CORPUS_DIR]``.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import yaml

from troubleshooter.logs import analyze_paths
from troubleshooter.core.ruleset import load_rules

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "logs" / "corpus"


def main(argv: list[str]) -> int:
    """Analyse every corpus log and print the table."""
    corpus = Path(argv[0]) if argv else CORPUS
    rules = load_rules()
    tp, fp, fn = Counter(), Counter(), Counter()
    roots_right, logs, healthy = 0, 0, 0
    for expect in sorted(corpus.glob("*.expect.yaml")):
        stem = expect.name[: -len(".expect.yaml")]
        log = next(p for p in (corpus / f"{stem}.log", corpus / f"{stem}.log.gz") if p.exists())
        expected = yaml.safe_load(expect.read_text(encoding="utf-8"))
        facts = analyze_paths([log], rules).facts
        got = {key[4:] for key in facts if key.startswith("log.") and key[4:] in rules.findings}
        want = set(expected["ids"])
        for ident in got & want:
            tp[ident] += 1
        for ident in got - want:
            fp[ident] += 1
        for ident in want - got:
            fn[ident] += 1
        roots_right += (facts.get("log.root_cause") or {}).get("id") == expected["root_cause"]
        logs += 1
        healthy += stem.startswith("healthy")
    print(f"{logs} logs ({healthy} healthy); root cause right in {roots_right}/{logs}\n")
    print("| id | logs | TP | FP | FN | precision | recall |")
    print("|---|---|---|---|---|---|---|")
    for ident in sorted(set(tp) | set(fp) | set(fn)):
        p = tp[ident] / (tp[ident] + fp[ident]) if tp[ident] + fp[ident] else float("nan")
        r = tp[ident] / (tp[ident] + fn[ident]) if tp[ident] + fn[ident] else float("nan")
        print(f"| {ident} | {tp[ident] + fn[ident]} | {tp[ident]} | {fp[ident]} | {fn[ident]} | {p:.2f} | {r:.2f} |")
    total_tp, total_fp, total_fn = sum(tp.values()), sum(fp.values()), sum(fn.values())
    print(f"| **all** | | {total_tp} | {total_fp} | {total_fn} | {total_tp / max(total_tp + total_fp, 1):.2f} "
          f"| {total_tp / max(total_tp + total_fn, 1):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
