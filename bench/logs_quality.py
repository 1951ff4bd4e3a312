"""The log analyzer's quality on real public logs, dev and test apart (issue 11).

Sections:
  DEV   - ``tests/real/logs`` logs whose source URL hashes to dev: aggregate figures, the per-root-cause
          table and every failing log whose first finding is wrong (tune on these only);
  TEST  - the same aggregate figures for the test split, nothing per log (never tune on test failures);
  regression - the self-written corpus ``tests/logs/corpus`` (ids and root cause exact): not evidence.

"Root cause first" = the first warning/error finding of the ``troubleshoot logs`` report is the
label's root cause ("incl. acceptable" also counts the label's ``acceptable`` ids); "clean" = no
warning/error finding (exit code 0).

    python bench/logs_quality.py [--split dev|test|all]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.real.logquality import Score, cases, pct, score  # noqa: E402

from troubleshooter.core.ruleset import load_rules  # noqa: E402
from troubleshooter.logs import analyze_paths  # noqa: E402

OLD_CORPUS = Path(__file__).resolve().parent.parent / "tests" / "logs" / "corpus"


def dev_section(result: Score) -> None:
    print(f"## DEV: {len(result.failing)} failing + {len(result.healthy)} healthy logs")
    print(result.summary() + "\n")
    print("| root cause | logs | first | first incl. acceptable | shown anywhere | reported clean |")
    print("|---|---|---|---|---|---|")
    for ident, row in sorted(result.per_id.items(), key=lambda kv: (-kv[1]["logs"], kv[0])):
        print(f"| {ident} | {row['logs']} | {row['first']} | {row['accepted']} | {row['found']} | {row['clean']} |")
    wrong = [v for v in result.failing if not v.root_first]
    if wrong:
        print("\nfailing logs whose first finding is not the root cause:")
        for v in wrong:
            print(f"  {v.case.name}: want {v.case.expect['root_cause']}, got {', '.join(v.shown) or 'CLEAN'}")
    noisy = [v for v in result.healthy if not v.clean]
    if noisy:
        print("\nhealthy logs with a warning:")
        for v in noisy:
            print(f"  {v.case.name}: {', '.join(v.shown)}")
    print()


def regression_line(rules) -> str:
    """The old self-written corpus: analyzer ids and root cause must match exactly."""
    exact = total = 0
    for expect in sorted(OLD_CORPUS.glob("*.expect.yaml")):
        import yaml

        stem = expect.name[: -len(".expect.yaml")]
        log = next(p for p in (OLD_CORPUS / f"{stem}.log", OLD_CORPUS / f"{stem}.log.gz") if p.exists())
        want = yaml.safe_load(expect.read_text(encoding="utf-8"))
        facts = analyze_paths([log], rules).facts
        got = {k[4:] for k in facts if k.startswith("log.") and k[4:] in rules.findings}
        root = (facts.get("log.root_cause") or {}).get("id")
        exact += got == set(want["ids"]) and root == want["root_cause"]
        total += 1
    return f"regression (self-written tests/logs/corpus, not evidence): {exact}/{total} exact ({pct(exact, total)})"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("dev", "test", "all"), default="all")
    args = parser.parse_args(argv)
    rules = load_rules()
    started = time.perf_counter()
    if args.split in ("dev", "all"):
        dev_section(score(cases("dev"), rules))
    if args.split in ("test", "all"):
        result = score(cases("test"), rules)
        print(f"## TEST: {len(result.failing)} failing + {len(result.healthy)} healthy logs (aggregate only)")
        print(result.summary() + "\n")
    print(regression_line(rules))
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
