"""Per-rank train-step time as terminal bars: p50 split into compute / exposed communication / other, p90 whisker.

Drawn with block characters (no plotting library): one line per rank up to ``MAX_ROWS`` ranks; bigger
worlds get a sparkline over every rank and lines for the slowest, median and fastest rank.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from troubleshooter.core.values import seconds
from troubleshooter.report.charts import sparkline
from troubleshooter.report.figures import StepFigure, StepRow

MAX_ROWS = 6
STYLES = {"compute": "bold blue", "exposed": "bold dark_orange", "other": "grey50"}


def _bar(row: StepRow, scale: float) -> Text:
    total = round(row.p50_s * scale)
    compute = round((row.compute_share or 0) * total) if row.compute_share is not None else 0
    exposed = min(total - compute, round((row.exposed_share or 0) * total))
    bar = Text()
    bar.append("█" * compute, STYLES["compute"])
    bar.append("█" * exposed, STYLES["exposed"])
    bar.append("█" * (total - compute - exposed), STYLES["other"])
    if row.p90_s and row.p90_s > row.p50_s:
        whisker = max(0, round(row.p90_s * scale) - total - 1)
        bar.append("─" * whisker + "┤", "dim")
    return bar


def step_text(fig: StepFigure, width: int = 60) -> Text:
    """The chart in ``width`` columns: a legend line, then one line per rank shown."""
    rows = list(fig.rows)
    out = Text()
    out.append("step time per rank" + (" " if width >= 50 else "\n"), "bold")
    out.append("█", STYLES["compute"])
    out.append(" compute ")
    out.append("█", STYLES["exposed"])
    out.append(" exposed comm ")
    out.append("┤", "dim")
    out.append(" p90\n")
    if len(rows) > MAX_ROWS:
        spark_width = max(8, width - 12)
        step = max(1, -(-len(rows) // spark_width))
        p50s = [max(r.p50_s for r in rows[i:i + step]) for i in range(0, len(rows), step)]
        out.append(f"p50 r0-{rows[-1].rank} ", "dim")
        out.append(sparkline(p50s) + "\n", "bold")
        ordered = sorted(rows, key=lambda r: r.p50_s)
        picks = {fig.slowest_rank, ordered[-1].rank, ordered[len(ordered) // 2].rank, ordered[0].rank}
        rows = [r for r in rows if r.rank in picks]
    label_w = max(len(f"r{r.rank}") for r in rows) + 1
    value_w = 10
    bar_w = max(4, width - label_w - value_w - 1)
    scale = bar_w / max(max(r.p90_s or 0, r.p50_s) for r in rows)
    for row in rows:
        slow = row.rank == fig.slowest_rank
        out.append(f"r{row.rank}".ljust(label_w), "bold red" if slow else "")
        bar = _bar(row, scale)
        out.append_text(bar)
        out.append(" " * max(1, bar_w - bar.cell_len + 1))
        out.append(seconds(row.p50_s).rjust(value_w - 1) + "\n", "bold red" if slow else "")
    out.rstrip()
    return out


class StepChart(Widget):
    """The step chart of the current report document; hidden while no train step was measured."""

    DEFAULT_CSS = "StepChart { height: auto; padding: 0 1; margin-bottom: 1; }"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.figure: StepFigure | None = None
        self.display = False

    def show(self, figure: StepFigure | None) -> None:
        """Draw ``figure`` (None hides the chart)."""
        self.figure = figure
        self.display = figure is not None
        self.refresh(layout=True)

    def render(self) -> Text:
        """Bars sized to the widget's width."""
        return step_text(self.figure, max(20, self.size.width - 2)) if self.figure else Text()
