"""Metamorphic robustness of the scanner on DEV data: how often a meaning-preserving rewrite changes a verdict.

Inputs (dev only, never the test split): the dev buggy scripts of tests/real/buggy, every construct of
tests/real/constructs, the dev real correct files of the manifest cache. Each rewrite of
tests/scan/metamorphic.py is applied to each item; the rewritten project is scanned (all its files; a rewrite
that moves code into a sibling module is also scanned by its entry file alone, against the original entry
alone) and compared with the original's verdict:

  lost       an expected id of a buggy script found before and not after (a recall gap);
  false      a warning shown after and not before (on a buggy script: one it does not expect);
  nondist    a file known to be distributed before and not after.

Prints one row per rewrite (items it applies to, items whose verdict changed), then the lost/false counts per
finding id, then (``--detail``) every changed item.

    python bench/scan_metamorphic.py [--only NAME[,NAME]] [--kinds buggy,construct,real] [--detail]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scan_quality import cache_root  # noqa: E402
from tests.scan.metamorphic import SPLITS_FILES, TRANSFORMS, compare, dev_items, scan_project  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scanner verdict changes under meaning-preserving rewrites (dev).")
    parser.add_argument("--only", help="comma-separated rewrite names (default: all)")
    parser.add_argument("--kinds", default="buggy,construct,real", help="buggy, construct, real (comma-separated)")
    parser.add_argument("--detail", action="store_true", help="list every item whose verdict changed")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(TRANSFORMS)
    unknown = [n for n in names if n not in TRANSFORMS]
    if unknown:
        parser.error(f"unknown rewrites: {', '.join(unknown)} (known: {', '.join(TRANSFORMS)})")
    started = time.perf_counter()
    items = dev_items(tuple(args.kinds.split(",")), cache_root())
    kinds = Counter(i.kind for i in items)
    print(f"# scanner metamorphic robustness, dev split: {len(items)} items "
          f"({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})\n")
    if "real" in args.kinds and not kinds["real"]:
        print(f"real correct files: cache {cache_root()} absent: run python bench/fill_real_cache.py\n")
    base: dict[tuple[str, bool], object] = {}
    rows, per_id, details = [], defaultdict(Counter), []
    for name in names:
        applied = changed = lost = false = nondist = errors = 0
        for item in items:
            try:
                project = TRANSFORMS[name](item.project)
            except Exception as exc:  # a rewrite's own bug: counted, never hidden
                errors += 1
                details.append(f"{name} {item.name}: rewrite failed: {type(exc).__name__}: {exc}")
                continue
            if project is None:
                continue
            applied += 1
            modes = [False] + ([True] if name in SPLITS_FILES else [])
            item_changed = False
            for entry_only in modes:
                key = (item.name + item.kind, entry_only)
                if key not in base:
                    base[key] = scan_project(item.project, entry_only)
                change = compare(item, base[key], scan_project(project, entry_only))
                if not change.any:
                    continue
                item_changed = True
                mode = " (entry alone)" if entry_only else ""
                lost += len(change.lost)
                false += len(change.gained)
                nondist += change.undistributed
                for ident in change.lost:
                    per_id[ident][f"lost {name}{mode}"] += 1
                for ident in change.gained:
                    per_id[ident][f"false {name}{mode}"] += 1
                details.append(f"{name}{mode} [{item.kind}] {item.name}: "
                               + "; ".join([*(f"lost {i}" for i in sorted(change.lost)),
                                            *(f"false {i}" for i in sorted(change.gained)),
                                            *(["no longer distributed"] if change.undistributed else [])]))
            changed += item_changed
        rows.append((name, applied, changed, lost, false, nondist, errors))
    print("| rewrite | applies to | verdict changed | lost | false | nondist | rewrite errors |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, applied, changed, lost, false, nondist, errors in rows:
        rate = f" ({changed / applied:.0%})" if applied else ""
        print(f"| {name} | {applied} | {changed}{rate} | {lost} | {false} | {nondist} | {errors} |")
    total = [sum(r[i] for r in rows) for i in range(1, 7)]
    print(f"| **all** | {total[0]} | {total[1]} | {total[2]} | {total[3]} | {total[4]} | {total[5]} |\n")
    if per_id:
        print("## per finding id\n")
        for ident, counts in sorted(per_id.items(), key=lambda kv: -sum(kv[1].values())):
            print(f"- {ident}: " + ", ".join(f"{what} {n}" for what, n in counts.most_common()))
        print()
    if args.detail and details:
        print("## changed items\n")
        print("\n".join(f"- {line}" for line in details) + "\n")
    print(f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
