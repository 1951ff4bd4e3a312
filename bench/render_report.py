"""Render time and size of the HTML report of a 64-rank world (8 nodes; start-up, bandwidth, train step).

Builds the synthetic world of tests/render/worlds.py once, then renders it to HTML (and Markdown)
``--runs`` times in this process and prints the median and worst render time and the HTML size.
Targets: ≤ 1 s and ≤ 1 MB.

    python bench/render_report.py [--ranks 64] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.render.worlds import synthetic_world  # noqa: E402
from troubleshooter.report.render import render  # noqa: E402

TARGET_S, TARGET_BYTES = 1.0, 1_000_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    doc = synthetic_world(args.ranks)
    times, md_times, html = [], [], ""
    for _ in range(args.runs):
        started = time.perf_counter()
        html = render(doc, "html")
        times.append(time.perf_counter() - started)
        started = time.perf_counter()
        render(doc, "md")
        md_times.append(time.perf_counter() - started)
    size, charts = len(html.encode("utf-8")), html.count('<svg class="chart"')
    print(f"{args.ranks}-rank report, {args.runs} runs: HTML render median {statistics.median(times):.3f} s, "
          f"worst {max(times):.3f} s (target ≤ {TARGET_S:g} s); Markdown median {statistics.median(md_times):.3f} s")
    print(f"HTML size {size / 1e6:.3f} MB ({size:,} bytes; target ≤ 1 MB), {charts} charts")
    return 0 if max(times) <= TARGET_S and size <= TARGET_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())
