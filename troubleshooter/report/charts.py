"""Inline SVG charts of the report figures, and text sparklines for Markdown and the terminal.

Hand-written SVG rather than a charting library: every chart is an ``<svg role="img">`` with a
``<title>`` and ``<desc>`` (screen readers, and the browser test checks them), draws with the
page's CSS variables and ``currentColor`` so light, dark and print styles apply, needs no script
and no network, and stays small for 64-rank worlds. Every label is escaped.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from markupsafe import Markup, escape

from troubleshooter.report.figures import BandwidthFigure, ScalingFigure, StartupFigure, StepFigure
from troubleshooter.core.values import number, seconds, size

WIDTH = 760
LEFT, RIGHT, TOP = 78, 20, 34
PHASE_COLORS = 8  # CSS classes ph0..ph7 (a colour-blind-safe palette in the page style)
SPARKS = "▁▂▃▄▅▆▇█"


def nice_ticks(high: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least ``high``."""
    if high <= 0:
        return [0.0, 1.0]
    raw = high / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(int(math.ceil(high / step - 1e-9)) + 1)]


def _open(chart_id: str, height: int, title: str, desc: str) -> list[str]:
    return [f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" '
            f'aria-labelledby="{chart_id}-t {chart_id}-d" xmlns="http://www.w3.org/2000/svg">',
            f'<title id="{chart_id}-t">{escape(title)}</title>', f'<desc id="{chart_id}-d">{escape(desc)}</desc>']


def _text(x: float, y: float, text: str, cls: str = "", anchor: str = "start") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{klass}>{escape(text)}</text>'


def _legend(items: Sequence[tuple[str, str]], y: float = 14) -> list[str]:
    """Coloured swatches with labels along the top; items are (css class, label)."""
    out, x = [], LEFT
    for cls, label in items:
        out.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" class="{cls}"/>')
        out.append(_text(x + 14, y, label, "small"))
        x += 22 + 7 * len(label)
    return out


def _x_axis(y: float, ticks: Iterable[tuple[float, str]], plot_bottom: float, plot_top: float) -> list[str]:
    out = [f'<line x1="{LEFT}" y1="{y}" x2="{WIDTH - RIGHT}" y2="{y}" class="axis"/>']
    for x, label in ticks:
        out.append(f'<line x1="{x:.1f}" y1="{plot_top}" x2="{x:.1f}" y2="{plot_bottom}" class="grid"/>')
        out.append(_text(x, y + 15, label, "small", "middle"))
    return out


def _labelled(i: int, marked: int | None, every: int) -> bool:
    """Label every ``every``-th row, leaving room around the marked row (always labelled)."""
    if i == marked:
        return True
    return i % every == 0 and (marked is None or abs(i - marked) >= every)


def startup_chart(fig: StartupFigure, chart_id: str = "startup") -> Markup:
    """Gantt: one row per rank, its phases end to end; the late rank's row and late phase are outlined."""
    n = len(fig.rows) + len(fig.missing)
    row_h = max(7, min(22, 420 // max(n, 1)))
    label_every = 1 if row_h >= 12 else math.ceil(12 / row_h)
    plot_w = WIDTH - LEFT - RIGHT
    height = TOP + n * row_h + 40
    ticks = nice_ticks(fig.total)
    scale = plot_w / (ticks[-1] or 1)
    late = (f"Rank {fig.late_rank} spent the longest in its own phases (imports and waiting aside); "
            f"its longest phase is {fig.late_phase}."
            if fig.late_rank is not None else "")
    out = _open(chart_id, height, f"Start-up timeline: phases of {len(fig.rows)} rank(s)",
                f"Each row is one rank's start-up, phases end to end ({', '.join(fig.phases)}); "
                f"the longest took {seconds(fig.total)}. {late}"
                + (f" Ranks with no report: {', '.join(map(str, fig.missing))}." if fig.missing else ""))
    out += _legend([(f"ph{i % PHASE_COLORS}", phase) for i, phase in enumerate(fig.phases)])
    bottom = TOP + n * row_h
    out += _x_axis(bottom + 4, ((LEFT + t * scale, seconds(t)) for t in ticks), bottom, TOP - 4)
    rows = sorted([(r.rank, r) for r in fig.rows] + [(m, None) for m in fig.missing], key=lambda item: item[0])
    marked = next((i for i, (rank, _) in enumerate(rows) if rank == fig.late_rank), None)
    for i, (rank, row) in enumerate(rows):
        y = TOP + i * row_h
        is_late = rank == fig.late_rank
        if is_late:
            out.append(f'<rect x="2" y="{y}" width="{WIDTH - 4}" height="{row_h}" class="late-row"/>')
        if _labelled(i, marked, label_every) or row is None:
            out.append(_text(LEFT - 6, y + row_h * 0.75, f"rank {rank}", "late" if is_late else "small", "end"))
        if row is None:
            out.append(_text(LEFT + 4, y + row_h * 0.75, "no start-up report (stuck or crashed)", "missing"))
            continue
        x = LEFT
        for j, (phase, secs) in enumerate(zip(fig.phases, row.seconds)):
            w = secs * scale
            outline = " late-phase" if is_late and phase == fig.late_phase else ""
            out.append(f'<rect x="{x:.1f}" y="{y + 1}" width="{max(w, 0.5):.1f}" height="{row_h - 2}" '
                       f'class="ph{j % PHASE_COLORS}{outline}"><title>{escape(f"rank {rank} {phase}: {seconds(secs)}")}'
                       f'</title></rect>')
            x += w
    out.append(_text(WIDTH - RIGHT, height - 4, "seconds since launch", "small", "end"))
    out.append("</svg>")
    return Markup("".join(out))  # noqa: S704 - every label passed through escape()


def bandwidth_chart(fig: BandwidthFigure, chart_id: str = "busbw") -> Markup:
    """busbw against message size (log x); the expectation band of the link shaded behind the curve."""
    height, bottom = 300, 250
    plot_w = WIDTH - LEFT - RIGHT
    sizes = [p[0] for p in fig.points]
    lo_x, hi_x = math.log2(min(sizes)), math.log2(max(sizes))
    span = (hi_x - lo_x) or 1.0
    band_high = max(v for v in (fig.band.low_gbps, fig.band.high_gbps) if v is not None) if fig.band else 0.0
    ticks = nice_ticks(max(max(p[1] for p in fig.points), band_high) * 1.1)
    y_of = lambda v: bottom - (v / ticks[-1]) * (bottom - TOP)  # noqa: E731
    x_of = lambda b: LEFT + (math.log2(b) - lo_x) / span * plot_w  # noqa: E731
    peak = max(fig.points, key=lambda p: p[1])
    band_text = ""
    if fig.band:
        low, high = fig.band.low_gbps, fig.band.high_gbps
        band_text = (f" Expected for {fig.link} ({fig.band.link_id}): "
                     + (f"{number(low)} to {number(high)} GB/s" if low is not None and high is not None else
                        f"{number(low if low is not None else high)} GB/s") + f" ({fig.band.source}).")
    out = _open(chart_id, height, f"all_reduce bus bandwidth vs message size ({fig.link}, {fig.ranks} ranks)",
                f"Bus bandwidth at {len(fig.points)} message sizes from {size(sizes[0])} to {size(sizes[-1])}; "
                f"peak {number(peak[1])} GB/s at {size(peak[0])}.{band_text or ' No expectation for this link.'}")
    out += _legend([("curve-swatch", "measured busbw")] + ([("band", "expected for the link")] if fig.band else []))
    for t in ticks:
        out.append(f'<line x1="{LEFT}" y1="{y_of(t):.1f}" x2="{WIDTH - RIGHT}" y2="{y_of(t):.1f}" class="grid"/>')
        out.append(_text(LEFT - 6, y_of(t) + 4, f"{number(t)}", "small", "end"))
    out.append(_text(14, (bottom + TOP) / 2, "GB/s", "small", "middle"))
    if fig.band:
        low, high = fig.band.low_gbps, fig.band.high_gbps
        if low is not None and high is not None:
            out.append(f'<rect x="{LEFT}" y="{y_of(high):.1f}" width="{plot_w}" height="{max(y_of(low) - y_of(high), 2):.1f}" '
                       f'class="band"><title>{escape(f"expected {number(low)}–{number(high)} GB/s ({fig.band.link_id})")}'
                       f'</title></rect>')
        names = ("up to", "from") if fig.band.measured_range else ("expected", "slow below" if high is not None else "slow below")
        for value, what in zip((high, low), names):
            if value is not None:
                out.append(f'<line x1="{LEFT}" y1="{y_of(value):.1f}" x2="{WIDTH - RIGHT}" y2="{y_of(value):.1f}" class="band-edge"/>')
                out.append(_text(WIDTH - RIGHT - 4, y_of(value) - 4, f"{what} {number(value)} GB/s", "small", "end"))
    out += _x_axis(bottom, ((x_of(b), size(b)) for b in sizes), bottom, TOP)
    path = " ".join(f"{x_of(b):.1f},{y_of(v):.1f}" for b, v, _ in fig.points)
    out.append(f'<polyline points="{path}" class="curve"/>')
    for b, v, us in fig.points:
        out.append(f'<circle cx="{x_of(b):.1f}" cy="{y_of(v):.1f}" r="4" class="point"><title>'
                   f'{escape(f"{size(b)}: {number(v)} GB/s in {seconds(us / 1e6)}")}</title></circle>')
    out.append(_text(WIDTH - RIGHT, height - 6, "message size (log scale)", "small", "end"))
    out.append("</svg>")
    return Markup("".join(out))  # noqa: S704 - every label passed through escape()


def step_chart(fig: StepFigure, chart_id: str = "steps") -> Markup:
    """One bar per rank: p50 step time split into compute / exposed communication / rest, p90 as a whisker."""
    n = len(fig.rows)
    row_h = max(7, min(22, 420 // max(n, 1)))
    label_every = 1 if row_h >= 12 else math.ceil(12 / row_h)
    plot_w = WIDTH - LEFT - RIGHT
    height = TOP + n * row_h + 40
    ticks = nice_ticks(max(max(r.p90_s or r.p50_s, r.p50_s) for r in fig.rows))
    scale = plot_w / (ticks[-1] or 1)
    slow = next((r for r in fig.rows if r.rank == fig.slowest_rank), None)
    fastest = min(fig.rows, key=lambda r: r.p50_s)
    out = _open(chart_id, height, f"Train-step time per rank (p50 bar, p90 whisker), {n} rank(s)",
                f"p50 from {seconds(fastest.p50_s)} (rank {fastest.rank}) to {seconds(max(r.p50_s for r in fig.rows))}; "
                + (f"slowest rank {slow.rank}. " if slow else "")
                + "Each bar is split by the profiled step's compute and exposed (not overlapped) communication.")
    out += _legend([("compute", "compute"), ("exposed", "exposed communication"), ("other", "other"),
                    ("whisker-swatch", "p90")])
    bottom = TOP + n * row_h
    out += _x_axis(bottom + 4, ((LEFT + t * scale, seconds(t)) for t in ticks), bottom, TOP - 4)
    marked = next((i for i, r in enumerate(fig.rows) if r.rank == fig.slowest_rank), None)
    for i, row in enumerate(fig.rows):
        y = TOP + i * row_h
        is_slow = row.rank == fig.slowest_rank
        if is_slow:
            out.append(f'<rect x="2" y="{y}" width="{WIDTH - 4}" height="{row_h}" class="late-row"/>')
        if _labelled(i, marked, label_every):
            out.append(_text(LEFT - 6, y + row_h * 0.75, f"rank {row.rank}", "late" if is_slow else "small", "end"))
        total = row.p50_s * scale
        compute = (row.compute_share or 0) * total
        exposed = min((row.exposed_share or 0) * total, total - compute)
        parts = (("compute", compute), ("exposed", exposed), ("other", total - compute - exposed)) \
            if row.compute_share is not None else (("other", total),)
        x = LEFT
        tip = escape(f"rank {row.rank}: p50 {seconds(row.p50_s)}" + (f", p90 {seconds(row.p90_s)}" if row.p90_s else "")
                     + (f", compute {row.compute_share:.0%}, exposed communication {row.exposed_share or 0:.0%}"
                        if row.compute_share is not None else ""))
        for cls, w in parts:
            if w > 0:
                out.append(f'<rect x="{x:.1f}" y="{y + 1}" width="{w:.1f}" height="{row_h - 2}" class="{cls}">'
                           f'<title>{tip}</title></rect>')
                x += w
        if row.p90_s and row.p90_s > row.p50_s:
            x90, mid = LEFT + row.p90_s * scale, y + row_h / 2
            out.append(f'<line x1="{LEFT + total:.1f}" y1="{mid:.1f}" x2="{x90:.1f}" y2="{mid:.1f}" class="whisker"/>')
            out.append(f'<line x1="{x90:.1f}" y1="{y + 2}" x2="{x90:.1f}" y2="{y + row_h - 2}" class="whisker"/>')
    out.append(_text(WIDTH - RIGHT, height - 4, "step time", "small", "end"))
    out.append("</svg>")
    return Markup("".join(out))  # noqa: S704 - every label passed through escape()


def scaling_chart(fig: ScalingFigure, chart_id: str = "scaling") -> Markup:
    """Left: throughput vs world size against linear; right: step time vs work growth (log-log) with the exponent."""
    height, bottom, half = 300, 240, (WIDTH - LEFT - RIGHT) // 2 - 30
    eff = fig.efficiency
    growth_text = "; ".join(f"{name} exponent {number(exp)}" for name, _, exp in fig.growth if exp is not None)
    out = _open(chart_id, height, "Scaling: throughput vs world size; step time vs batch and sequence length",
                f"Throughput {', '.join(f'{k} rank(s): {number(t)} samples/s' for k, t in zip(fig.world_sizes, fig.samples_per_s))}; "
                f"efficiency at {fig.world_sizes[-1]} ranks {eff[-1]:.0%}. {growth_text}. "
                "An exponent of 1 means time grows linearly with the work.")
    # throughput panel
    ideal_top = fig.samples_per_s[0] * fig.world_sizes[-1]
    ticks = nice_ticks(max(max(fig.samples_per_s), ideal_top) * 1.05)
    y_of = lambda v: bottom - v / ticks[-1] * (bottom - TOP)  # noqa: E731
    kmax = max(fig.world_sizes)
    x_of = lambda k: LEFT + (k - 1) / max(kmax - 1, 1) * half if kmax > 1 else LEFT + half / 2  # noqa: E731
    out += _legend([("curve-swatch", "measured"), ("ideal-swatch", "linear (ideal)")])
    for t in ticks:
        out.append(f'<line x1="{LEFT}" y1="{y_of(t):.1f}" x2="{LEFT + half}" y2="{y_of(t):.1f}" class="grid"/>')
        out.append(_text(LEFT - 6, y_of(t) + 4, number(t), "small", "end"))
    out.append(_text(14, (bottom + TOP) / 2, "samples/s", "small", "middle"))
    out.append(f'<line x1="{x_of(1):.1f}" y1="{y_of(fig.samples_per_s[0]):.1f}" x2="{x_of(kmax):.1f}" '
               f'y2="{y_of(ideal_top):.1f}" class="ideal"/>')
    out.append(f'<polyline points="{" ".join(f"{x_of(k):.1f},{y_of(t):.1f}" for k, t in zip(fig.world_sizes, fig.samples_per_s))}" '
               'class="curve"/>')
    for k, t, e in zip(fig.world_sizes, fig.samples_per_s, eff):
        out.append(f'<circle cx="{x_of(k):.1f}" cy="{y_of(t):.1f}" r="4" class="point"><title>'
                   f'{escape(f"{k} rank(s): {number(t)} samples/s, efficiency {e:.0%}")}</title></circle>')
        out.append(_text(x_of(k), bottom + 15, str(k), "small", "middle"))
        out.append(_text(x_of(k), y_of(t) - 8, f"{e:.0%}", "small", "middle"))
    out.append(f'<line x1="{LEFT}" y1="{bottom}" x2="{LEFT + half}" y2="{bottom}" class="axis"/>')
    out.append(_text(LEFT + half / 2, bottom + 32, "world size (ranks); labels: efficiency", "small", "middle"))
    # growth panel (log-log)
    if fig.growth:
        left2 = LEFT + half + 80
        all_t = [s for _, series, _ in fig.growth for _, s in series]
        lo, hi = math.log(min(all_t)), math.log(max(all_t) * 1.05)
        fmax = max(f for _, series, _ in fig.growth for f, _ in series)
        yl = lambda s: bottom - (math.log(s) - lo) / ((hi - lo) or 1) * (bottom - TOP)  # noqa: E731
        xl = lambda f: left2 + math.log(f) / (math.log(fmax) or 1) * (WIDTH - RIGHT - left2)  # noqa: E731
        for s in sorted({min(all_t), max(all_t)}):
            out.append(_text(left2 - 6, yl(s) + 4, seconds(s), "small", "end"))
        for f in sorted({f for _, series, _ in fig.growth for f, _ in series}):
            out.append(_text(xl(f), bottom + 15, f"×{f}", "small", "middle"))
        out.append(f'<line x1="{left2}" y1="{bottom}" x2="{WIDTH - RIGHT}" y2="{bottom}" class="axis"/>')
        for i, (name, series, exp) in enumerate(fig.growth):
            cls = f"ph{i % PHASE_COLORS}"
            pts = " ".join(f"{xl(f):.1f},{yl(s):.1f}" for f, s in series)
            out.append(f'<polyline points="{pts}" class="series {cls}-stroke"/>')
            f_last, s_last = series[-1]
            out.append(_text(xl(f_last) - 4, yl(s_last) - 8 - 12 * i,
                             f"{name}: exponent {number(exp)}" if exp is not None else name, "small", "end"))
            for f, s in series:
                out.append(f'<circle cx="{xl(f):.1f}" cy="{yl(s):.1f}" r="3.5" class="{cls}"><title>'
                           f'{escape(f"{name} ×{f}: {seconds(s)} per step")}</title></circle>')
        out.append(_text((left2 + WIDTH - RIGHT) / 2, bottom + 32, "work per step (log); time per step (log)", "small",
                         "middle"))
    out.append("</svg>")
    return Markup("".join(out))  # noqa: S704 - every label passed through escape()


def sparkline(values: Sequence[float]) -> str:
    """▁▃█ style: one block per value, scaled from 0 to the largest."""
    top = max(values, default=0)
    if top <= 0:
        return SPARKS[0] * len(values)
    return "".join(SPARKS[min(len(SPARKS) - 1, int(v / top * (len(SPARKS) - 1) + 0.5))] for v in values)
