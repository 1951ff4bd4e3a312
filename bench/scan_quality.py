"""The scanner's quality on real evidence, dev and test apart (issue 11).

Sections:
  (a) buggy scripts from public bug reports, dev split: precision/recall per id and micro totals;
  (b) the same, test split: aggregate figures only (never tune on test failures);
  (c) real correct files (manifest, read from the local cache): warnings (must be 0) and files the scan
      does not know to be distributed (``scan.uses_distributed`` false; must be none);
  (d) construct scripts (our minimal versions of real constructs): warnings (must be 0);
  (e) the self-written corpus tests/scan/corpus: regression only, not evidence.

"Found"/"warning" means a finding of severity warning or error after the rules (the CLI's exit code).
Per-item detail is printed for dev only; test gives counts.

    python bench/scan_quality.py [--split dev|test|all]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.scan.quality import (  # noqa: E402
    buggy_files, construct_items, expected_of, construct_main, format_table, manifest_entries, measure, scan_real,
    shown_findings, totals,
)


def cache_root() -> Path:
    """``$DDP_TS_REAL_CACHE`` or ``~/.cache/ddp-troubleshooter/real-scripts``."""
    return Path(os.environ.get("DDP_TS_REAL_CACHE") or Path.home() / ".cache" / "ddp-troubleshooter" / "real-scripts")


def aggregate_line(table: dict) -> str:
    a = totals(table)
    return f"precision {a['precision']:.2f}  recall {a['recall']:.2f}  (TP {a['tp']}, FP {a['fp']}, FN {a['fn']})"


def buggy_section(split: str) -> None:
    files = buggy_files(split)
    table = measure(files, shown=True, truth_of=expected_of)
    if split == "dev":
        print(f"## (a) buggy scripts, dev split: {len(files)} scripts\n")
        print(format_table(table, only_seen=True))
        print(f"\nmicro totals: {aggregate_line(table)}\n")
    else:
        print(f"## (b) buggy scripts, test split: {len(files)} scripts (aggregate only)\n")
        print(f"{aggregate_line(table)}\n")


def real_section(split: str) -> None:
    cache = cache_root()
    entries = manifest_entries(split)
    print(f"## (c) real correct files, {split} split: {len(entries)} files (cache {cache})\n")
    if not cache.is_dir():
        print("cache absent: run python bench/fill_real_cache.py "
              "(with network; or --from-mirror DIR to copy from local git mirrors)\n")
        return
    outcomes = [scan_real(e, cache) for e in entries]
    missing = [o for o in outcomes if o.missing]
    scanned = [o for o in outcomes if not o.missing]
    if missing:
        print(f"{len(missing)} files absent from the cache: run python bench/fill_real_cache.py")
    warned = [o for o in scanned if o.warnings]
    silent = [o for o in scanned if not o.distributed]
    print(f"scanned {len(scanned)}: warnings {sum(len(o.warnings) for o in scanned)} in {len(warned)} files "
          f"(must be 0); reported as non-distributed {len(silent)} (must be 0)")
    if split == "dev":
        for o in warned:
            print(f"  {o.entry['repo']}/{o.entry['path']}: " + "; ".join(o.warnings))
        for o in silent:
            print(f"  non-distributed: {o.entry['repo']}/{o.entry['path']} ({o.entry['framework']})")
    print()


def constructs_section() -> None:
    items = construct_items()
    print(f"## (d) constructs: {len(items)} scripts\n")
    bad = 0
    for item in items:
        paths = [str(item)]
        hits, facts = shown_findings(paths)
        problems = [f"{ident} line {h['line']}" for ident, hs in sorted(hits.items()) for h in hs or [{"line": 0}]]
        if not facts.get("scan.uses_distributed"):
            problems.append("reported as non-distributed")
        if problems:
            bad += 1
            print(f"  {construct_main(item).relative_to(item.parent.parent) if item.is_dir() else item.name}: "
                  + "; ".join(problems))
    print(f"constructs with a warning or not seen as distributed: {bad}/{len(items)} (must be 0)\n")


def regression_section() -> None:
    table = measure()
    print("## (e) self-written corpus tests/scan/corpus: regression only, not evidence\n")
    print(f"{aggregate_line(table)}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scanner quality on the real corpora (dev and test apart).")
    parser.add_argument("--split", choices=("dev", "test", "all"), default="all")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    splits = ("dev", "test") if args.split == "all" else (args.split,)
    for split in splits:
        buggy_section(split)
    for split in splits:
        real_section(split)
    if args.split in ("dev", "all"):
        constructs_section()
        regression_section()
    print(f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
