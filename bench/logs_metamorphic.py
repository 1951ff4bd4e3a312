"""How much the log analyzer's verdicts depend on a log's framing (issue 11): metamorphic robustness.

Each meaning-preserving transformation of ``tests/logs/metamorphic.py`` (another launcher's rank labels,
timestamps, colours, CRLF, wrapping, interleaving, duplication, a pasted tail, prompt and fences, Windows
paths, a non-ASCII user name), and the bench's own (:data:`FRAMINGS`: a terminal of an odd width, a narrow
re-flow, a line broken once where no width explains it), is applied to every DEV log of ``tests/real/logs`` (the test split is never
read here), and the ``troubleshoot logs`` verdict of the re-framed log is compared with the original's:

- *applied*: logs the transformation changed at all;
- *first moved*: failing logs whose first finding changed;
- *lost* / *gained*: failing logs whose root cause stopped / started coming first;
- *now clean*: failing logs reported clean after the transformation;
- *healthy noisy*: healthy logs that got a warning.

    python bench/logs_metamorphic.py [--only NAME ...] [--show]

``--show`` lists the dev logs behind every count (tune on these).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.logs.metamorphic import TRANSFORMS, _join, _split, word_wrap, wrap  # noqa: E402
from tests.real.logquality import LogCase, Verdict, cases, judge  # noqa: E402

from troubleshooter.core.ruleset import load_rules  # noqa: E402


def broken_once(longer_than: int):
    """Each line longer than ``longer_than`` broken once, at the first space after its middle (an editor or a
    chat box that broke a long line where it pleased: NVIDIA/nccl-tests#162's command "-e 128" / "M -f 2")."""
    def apply(text: str) -> str:
        lines, end = _split(text)
        out = []
        for line in lines:
            cut = line.find(" ", len(line) // 2) if len(line) > longer_than else -1
            out += [line[:cut], line[cut + 1:]] if cut > 0 else [line]
        return _join(out, end)
    return apply


# framings of the bench only (tests/logs/metamorphic.py holds the pinned ones): a terminal of an odd width, a
# narrow re-flow (guoqincode/Open-AnimateAnyone#114's torch warning in rows of 19-79 characters), a line broken
# once where no width explains it
FRAMINGS = {**TRANSFORMS, "wrapped at 90 columns": wrap(90), "re-flowed at words, 60 columns": word_wrap(60),
            "broken once after the middle": broken_once(60)}


def reframed(case: LogCase, text: str, workdir: Path) -> LogCase:
    """The case with its log replaced by ``text`` (written as bytes: CRLF and non-ASCII kept as they are)."""
    path = workdir / f"{case.name}.log"
    path.write_bytes(text.encode("utf-8"))
    return LogCase(case.name, path, case.expect)


def compare(name: str, transform, originals: list[Verdict], rules, workdir: Path) -> dict[str, list[str]]:
    """The dev logs behind each count for one transformation."""
    rows: dict[str, list[str]] = {key: [] for key in ("applied", "first moved", "lost", "gained", "now clean",
                                                      "healthy noisy")}
    for before in originals:
        text = before.case.log.read_text(encoding="utf-8", errors="replace")
        changed = transform(text)
        if changed == text:
            continue
        rows["applied"].append(before.case.name)
        after = judge(reframed(before.case, changed, workdir), rules)
        label = f"{before.case.name}: {before.first or 'CLEAN'} -> {after.first or 'CLEAN'}"
        if before.case.healthy:
            if before.clean and not after.clean:
                rows["healthy noisy"].append(f"{before.case.name}: {', '.join(after.shown)}")
            continue
        if after.first != before.first:
            rows["first moved"].append(label)
        if before.root_first and not after.root_first:
            rows["lost"].append(label)
        if after.root_first and not before.root_first:
            rows["gained"].append(label)
        if after.clean and not before.clean:
            rows["now clean"].append(label)
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", help="a transformation's name (repeatable); default: all")
    parser.add_argument("--show", action="store_true", help="list the dev logs behind each count")
    args = parser.parse_args(argv)
    unknown = set(args.only or ()) - set(FRAMINGS)
    if unknown:
        parser.error(f"unknown transformation(s): {', '.join(sorted(unknown))}; known: {', '.join(FRAMINGS)}")
    rules = load_rules()
    started = time.perf_counter()
    originals = [judge(case, rules) for case in cases("dev")]
    failing = sum(not v.case.healthy for v in originals)
    healthy = len(originals) - failing
    right = sum(v.root_first for v in originals)
    print(f"## Metamorphic robustness on DEV: {failing} failing + {healthy} healthy logs "
          f"(root cause first {right}/{failing} as they are)\n")
    print("| transformation | applied | first moved | lost | gained | now clean | healthy noisy |")
    print("|---|---|---|---|---|---|---|")
    totals = dict.fromkeys(("first moved", "lost", "gained", "now clean", "healthy noisy"), 0)
    details: list[tuple[str, dict[str, list[str]]]] = []
    with tempfile.TemporaryDirectory(prefix="metamorphic-") as tmp:
        for name, transform in FRAMINGS.items():
            if args.only and name not in args.only:
                continue
            rows = compare(name, transform, originals, rules, Path(tmp))
            details.append((name, rows))
            for key in totals:
                totals[key] += len(rows[key])
            print(f"| {name} | {len(rows['applied'])} | {len(rows['first moved'])} | {len(rows['lost'])} | "
                  f"{len(rows['gained'])} | {len(rows['now clean'])} | {len(rows['healthy noisy'])} |")
    print(f"| **total** | | {totals['first moved']} | {totals['lost']} | {totals['gained']} | "
          f"{totals['now clean']} | {totals['healthy noisy']} |")
    invariant = sum(1 for _, rows in details if not any(rows[k] for k in totals))
    print(f"\ninvariant transformations: {invariant}/{len(details)}")
    if args.show:
        for name, rows in details:
            moved = {k: v for k, v in rows.items() if k != "applied" and v}
            if moved:
                print(f"\n### {name}")
                for key, items in moved.items():
                    print(f"  {key}:")
                    for item in items:
                        print(f"    {item}")
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
