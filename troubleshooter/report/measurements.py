"""View model of what the probes measured: charts with their data, per-rank results with ranks as columns.

World results (the bandwidth sweep, the start-up phase table, facts every rank measured alike)
appear once; what differs between ranks sits in one table, ranks as columns, 16 ranks per block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from markupsafe import Markup

from troubleshooter.report import charts
from troubleshooter.report.figures import Figures, figures
from troubleshooter.core.values import number, readable, seconds, size

RANKS_PER_BLOCK = 16
MAX_CELL = 48
DRAWN_TABLES = {("collective", "sweep"), ("startup", "table"), ("scaling", "table")}  # shown by a chart
DRAWN_FACTS = {"startup.phase_s"}  # per rank in the start-up chart's numbers


@dataclass(frozen=True)
class Table:
    """A small table: header row and body rows, all text."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class ChartView:
    """One chart: SVG for HTML, a sparkline for Markdown, the numbers behind it as tables."""

    id: str
    heading: str
    svg: Markup
    caption: str
    spark: str
    tables: tuple[Table, ...]


@dataclass(frozen=True)
class Measurements:
    """Charts, per-rank results (ranks as columns) and results every rank shares."""

    charts: tuple[ChartView, ...]
    per_rank: tuple[Table, ...]
    same_on_all_ranks: tuple[tuple[str, str], ...]
    world_tables: tuple[tuple[str, Table], ...]


def rank_blocks(ranks: Sequence[int], label: str, rows: Sequence[tuple[str, Callable[[int], str]]]) -> tuple[Table, ...]:
    """Tables with ``label`` then one column per rank, ``RANKS_PER_BLOCK`` ranks per table."""
    out = []
    for start in range(0, len(ranks), RANKS_PER_BLOCK):
        block = ranks[start:start + RANKS_PER_BLOCK]
        out.append(Table((label, *(f"rank {r}" for r in block)),
                         tuple((name, *(cell(r) for r in block)) for name, cell in rows)))
    return tuple(out)


def _short(text: str) -> str:
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def chart_views(figs: Figures) -> tuple[ChartView, ...]:
    """The charts of the figures present, in reading order."""
    out = []
    if figs.startup:
        fig = figs.startup
        by_rank = {r.rank: r for r in fig.rows}
        ranks = sorted([*by_rank, *fig.missing])

        def phase_cell(i: int) -> Callable[[int], str]:
            return lambda r: seconds(by_rank[r].seconds[i]) if r in by_rank else "–"
        rows = [(phase, phase_cell(i)) for i, phase in enumerate(fig.phases)]
        rows.append(("total", lambda r: seconds(sum(by_rank[r].seconds)) if r in by_rank else "no report"))
        late = (f"Rank {fig.late_rank} (highlighted) spent the longest in its own phases, imports and waiting aside; "
                f"its longest phase, {fig.late_phase}, is outlined."
                if fig.late_rank is not None else "")
        out.append(ChartView(
            "startup", "Start-up timeline", charts.startup_chart(fig),
            f"Phases of each rank from launch to the first step; longest start-up {seconds(fig.total)}. {late}"
            + (f" No report from rank(s) {', '.join(map(str, fig.missing))}." if fig.missing else ""),
            charts.sparkline([sum(by_rank[r].seconds) if r in by_rank else 0 for r in ranks]),
            rank_blocks(ranks, "phase", rows)))
    if figs.bandwidth:
        fig = figs.bandwidth
        band = fig.band
        expect = ""
        if band:
            values = [number(v) for v in (band.low_gbps, band.high_gbps) if v is not None]
            expect = (f" Shaded: what {fig.link} should give, {' to '.join(values)} GB/s "
                      f"({band.link_id}: {band.source})"
                      + (f"; it applies to messages of {size(band.min_message_bytes)} and more, smaller ones measure "
                         "latency." if band.min_message_bytes and not band.measured_range else "."))
        out.append(ChartView(
            "busbw", "all_reduce bus bandwidth", charts.bandwidth_chart(fig),
            f"Bus bandwidth (nccl-tests definition) of the slowest rank at each message size, {fig.ranks} ranks, "
            f"{fig.link}.{expect or ' No expectation for this link in rules/expectations.yaml.'}",
            charts.sparkline([p[1] for p in fig.points]),
            (Table(("message size", "time", "busbw"),
                   tuple((size(b), seconds(us / 1e6), f"{number(v)} GB/s") for b, v, us in fig.points)),)))
    if figs.steps:
        fig = figs.steps
        rows_by_rank = {r.rank: r for r in fig.rows}
        pct = (lambda v: f"{v:.0%}" if v is not None else "–")
        out.append(ChartView(
            "steps", "Train-step time per rank", charts.step_chart(fig),
            "p50 step time of each rank (bar) split by its profiled step into compute, exposed communication "
            "(not overlapped with compute) and the rest; the whisker reaches p90."
            + (f" Slowest rank: {fig.slowest_rank}." if fig.slowest_rank is not None else ""),
            charts.sparkline([r.p50_s for r in fig.rows]),
            rank_blocks([r.rank for r in fig.rows], "", [
                ("p50", lambda r: seconds(rows_by_rank[r].p50_s)),
                ("p90", lambda r: seconds(rows_by_rank[r].p90_s) if rows_by_rank[r].p90_s is not None else "–"),
                ("compute", lambda r: pct(rows_by_rank[r].compute_share)),
                ("exposed communication", lambda r: pct(rows_by_rank[r].exposed_share))])))
    if figs.scaling:
        fig = figs.scaling
        tables = [Table(("world size", "samples/s", "efficiency"),
                        tuple((str(k), number(t), f"{e:.0%}") for k, t, e in
                              zip(fig.world_sizes, fig.samples_per_s, fig.efficiency)))]
        for name, series, exp in fig.growth:
            tables.append(Table((f"{name} growth", "step time"), tuple((f"×{f}", seconds(s)) for f, s in series)
                                + ((("fitted exponent", number(exp)),) if exp is not None else ())))
        out.append(ChartView(
            "scaling", "Scaling", charts.scaling_chart(fig),
            f"Throughput at each world size against linear scaling (efficiency {fig.efficiency[-1]:.0%} at "
            f"{fig.world_sizes[-1]} ranks), and step time as the batch"
            + (" and sequence length grow" if any(g[0] == "seq" for g in fig.growth) else " grows")
            + " with the fitted exponent (1 = linear).",
            charts.sparkline(list(fig.samples_per_s)), tuple(tables)))
    return tuple(out)


def _same(values: list[Any]) -> bool:
    return all(v == values[0] for v in values[1:])


def measurements(doc: Mapping[str, Any]) -> Measurements:
    """Charts, the per-rank table and the shared results of ``doc``."""
    ranks = [r for r in doc.get("ranks") or [] if isinstance(r.get("rank"), int)]
    rank_ids = [r["rank"] for r in ranks]
    by_rank = {r["rank"]: r for r in ranks}
    rows: list[tuple[str, Callable[[int], str]]] = []
    same: list[tuple[str, str]] = []
    if ranks:
        rows.append(("host", lambda r: _short(str(by_rank[r].get("host") or "–"))))
        status: dict[tuple[str, int], str] = {}
        for p in doc.get("probes") or []:
            if p.get("rank") in by_rank:
                status[(p["name"], p["rank"])] = f"{p.get('status', '')} {seconds(float(p.get('duration_s') or 0))}"
        for name in dict.fromkeys(name for name, _ in status):
            rows.append((f"{name} probe", lambda r, name=name: status.get((name, r), "–")))
        keys = dict.fromkeys(k for r in ranks for k in (r.get("facts") or {}) if k not in DRAWN_FACTS)
        for key in keys:
            values = [(r.get("facts") or {}).get(key) for r in ranks]
            if len(ranks) > 1 and _same(values):
                same.append((key, readable(key, values[0])))
            else:
                rows.append((key, lambda r, key=key: _short(readable(key, (by_rank[r].get("facts") or {}).get(key)))
                             if key in (by_rank[r].get("facts") or {}) else "–"))
    world_tables = []
    groups: dict[tuple[str, str], list[tuple[Any, list]]] = {}
    for p in doc.get("probes") or []:
        for name, value in (p.get("details") or {}).items():
            if (p["name"], name) in DRAWN_TABLES:
                continue
            if isinstance(value, list) and value and all(isinstance(row, dict) for row in value):
                groups.setdefault((p["name"], name), []).append((p.get("rank"), value))
    for (probe, name), tables in groups.items():
        shared = _same([t for _, t in tables])
        for rank, table in tables[:1] if shared else tables:
            columns = tuple(dict.fromkeys(k for row in table for k in row))
            where = "" if shared or rank is None else f" (rank {rank})"
            world_tables.append((f"{probe}: {name}{where}", Table(
                columns, tuple(tuple(_short(readable(c, row.get(c, ""))) for c in columns) for row in table[:200]))))
    return Measurements(chart_views(figures(doc)), rank_blocks(rank_ids, "", rows), tuple(same), tuple(world_tables))
