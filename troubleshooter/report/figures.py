"""Figure data extracted from a report document: what the charts (HTML, Markdown, TUI) draw.

Each extractor reads the probe results of the document (fresh or reloaded) and returns None when
the probe did not run or measured nothing; the charts never read the document themselves.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping

from troubleshooter.core.paths import rules_dir


@dataclass(frozen=True)
class StartupRow:
    """One rank's start-up phases in order (seconds; None where the rank reported nothing)."""

    rank: int
    seconds: tuple[float, ...]


@dataclass(frozen=True)
class StartupFigure:
    """Phase x rank start-up timeline; ``late_rank``/``late_phase`` are the probe's verdict."""

    phases: tuple[str, ...]
    rows: tuple[StartupRow, ...]
    missing: tuple[int, ...]  # ranks in the world that reported no start-up (stuck or crashed)
    late_rank: int | None
    late_phase: str | None

    @property
    def total(self) -> float:
        """The longest start-up of any rank."""
        return max((sum(r.seconds) for r in self.rows), default=0.0)


@dataclass(frozen=True)
class Band:
    """What a link should give: the row of rules/expectations.yaml that matched."""

    low_gbps: float | None
    high_gbps: float | None
    link_id: str
    source: str
    min_message_bytes: int | None
    measured_range: bool = False  # band_gbps: the spread of cited measurements, not a healthy/slow threshold


@dataclass(frozen=True)
class BandwidthFigure:
    """all_reduce bus bandwidth against message size, with the expectation band of the link."""

    link: str
    ranks: int
    points: tuple[tuple[int, float, float], ...]  # (bytes, busbw GB/s, time µs)
    band: Band | None


@dataclass(frozen=True)
class StepRow:
    """One rank's train-step times and the split of its profiled step."""

    rank: int
    p50_s: float
    p90_s: float | None
    compute_share: float | None  # of the profiled step
    exposed_share: float | None  # communication not hidden behind compute


@dataclass(frozen=True)
class StepFigure:
    """Per-rank p50/p90 step time with compute vs exposed communication."""

    rows: tuple[StepRow, ...]
    slowest_rank: int | None


@dataclass(frozen=True)
class ScalingFigure:
    """Throughput and efficiency against world size; step time against batch/sequence growth."""

    world_sizes: tuple[int, ...]
    samples_per_s: tuple[float, ...]
    growth: tuple[tuple[str, tuple[tuple[int, float], ...], float | None], ...]  # (name, ((factor, s), ...), exponent)

    @property
    def efficiency(self) -> tuple[float, ...]:
        """Throughput at k ranks / (k x throughput at 1 rank)."""
        base = self.samples_per_s[0] if self.samples_per_s else 0
        return tuple(t / (k * base) if base else 0.0 for k, t in zip(self.world_sizes, self.samples_per_s))


@dataclass(frozen=True)
class Figures:
    """Every figure the document supports."""

    startup: StartupFigure | None
    bandwidth: BandwidthFigure | None
    steps: StepFigure | None
    scaling: ScalingFigure | None

    def __bool__(self) -> bool:
        return any((self.startup, self.bandwidth, self.steps, self.scaling))


def _runs(doc: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    """The document's results of probe ``name`` that measured something, by rank."""
    runs = [p for p in doc.get("probes") or [] if p.get("name") == name and (p.get("facts") or p.get("details"))]
    return sorted(runs, key=lambda p: (p.get("rank") is None, p.get("rank") or 0))


def _fact(runs: Iterable[Mapping[str, Any]], key: str) -> Any:
    return next((p["facts"][key] for p in runs if key in (p.get("facts") or {})), None)


LARGEST = 1e15  # beyond any bytes, seconds or GB/s a probe measures: a corrupt value, not a measurement
SMALLEST = 1e-12  # below any non-zero time, size or rate a probe measures (denormals overflow ratios)


def _number(value: Any) -> float | None:
    """A finite number of sane size, else None (booleans, text, NaN, infinities and denormals are not measurements)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    sane = math.isfinite(number) and (number == 0 or SMALLEST <= abs(number) <= LARGEST)
    return number if sane else None


def _positive(value: Any) -> float | None:
    number = _number(value)
    return number if number is not None and number > 0 else None


def world_size(doc: Mapping[str, Any]) -> int:
    """Ranks in the world: the document's world, else the ranks that reported."""
    size = (doc.get("world") or {}).get("size")
    return int(size) if isinstance(size, int) else len(doc.get("ranks") or ())


def startup_figure(doc: Mapping[str, Any]) -> StartupFigure | None:
    """Start-up phases of every rank that ran the start-up probe."""
    runs = [p for p in _runs(doc, "startup") if isinstance((p.get("facts") or {}).get("startup.phase_s"), dict)]
    if not runs:
        return None
    phases = tuple(dict.fromkeys(k for p in runs for k in p["facts"]["startup.phase_s"]))
    rows = tuple(StartupRow(int(p.get("rank") or 0),
                            tuple(_positive(p["facts"]["startup.phase_s"].get(ph)) or 0.0 for ph in phases)) for p in runs)
    reported = {r.rank for r in rows}
    missing = tuple(r for r in range(world_size(doc)) if r not in reported)
    late_rank = _fact(runs, "startup.slowest_rank")
    late_rank = late_rank if isinstance(late_rank, int) else None
    late_runs = [p for p in runs if p.get("rank") == late_rank] or runs  # slowest_phase is each rank's own
    return StartupFigure(phases, rows, missing, late_rank, _fact(late_runs, "startup.slowest_phase"))


def load_expectations() -> dict:
    """rules/expectations.yaml through the knowledge loader; {} when absent or invalid. Read once per version of the file."""
    path = rules_dir() / "expectations.yaml"
    try:
        return _expectations(str(path), path.stat().st_mtime_ns)
    except OSError:
        return {}


@lru_cache(maxsize=4)
def _expectations(path: str, _mtime_ns: int) -> dict:
    from troubleshooter.core.errors import RuleFileError
    from troubleshooter.core.ruleset import load_rules

    try:
        return load_rules(only=("expectations",)).expectations
    except RuleFileError:  # a report still renders; `rules check` says what is wrong
        return {}


def expectation_band(expectations: Mapping[str, Any], link: str, gpu_names: Iterable[str] = (),
                     ranks: int | None = None) -> Band | None:
    """The band of the ``links`` row for ``backend/transport``: ``band_gbps`` if given, else slow_below..expected.

    A row naming GPUs (``gpu_match``, ``gpus``) wins when it matches; otherwise the generic row.
    """
    backend, _, transport = link.partition("/")
    names = list(gpu_names)
    best = None
    for row in expectations.get("links") or []:
        if not isinstance(row, dict) or row.get("backend") != backend or row.get("transport") != transport:
            continue
        specific = row.get("gpu_match") is not None or row.get("gpus") is not None
        if row.get("gpu_match") and not any(re.search(str(row["gpu_match"]), n) for n in names):
            continue
        if row.get("gpus") is not None and row.get("gpus") != ranks:
            continue
        if best is None or specific:
            best = row
    if best is None:
        return None
    band = best.get("band_gbps")
    low, high = (band if isinstance(band, list) and len(band) == 2 else
                 (best.get("slow_below_gbps"), best.get("expected_busbw_gbps")))
    low, high = _number(low), _number(high)
    if low is None and high is None:
        return None
    return Band(low, high, str(best.get("id", "")), str(best.get("source", "")),
                int(expectations["min_message_bytes"]) if _number(expectations.get("min_message_bytes")) else None,
                measured_range=isinstance(band, list))


def bandwidth_figure(doc: Mapping[str, Any], expectations: Mapping[str, Any] | None = None) -> BandwidthFigure | None:
    """The bandwidth sweep (a world result: every rank holds the same slowest-rank medians)."""
    runs = [p for p in _runs(doc, "collective") if (p.get("details") or {}).get("sweep")]
    if not runs:
        return None
    points = tuple((int(row["bytes"]), _number(row["busbw_gbps"]), _positive(row.get("time_us")) or 0.0)
                   for row in runs[0]["details"]["sweep"] if isinstance(row, dict) and (_positive(row.get("bytes")) or 0) >= 1
                   and (_number(row.get("busbw_gbps")) or -1) >= 0)
    if not points:
        return None
    link = str(_fact(runs, "collective.link") or "")
    gpus = (doc.get("facts") or {}).get("hw.gpus") or []
    names = [g.get("name", "") if isinstance(g, dict) else str(g) for g in gpus] if isinstance(gpus, list) else []
    n = world_size(doc)
    band = expectation_band(load_expectations() if expectations is None else expectations, link, names, n)
    return BandwidthFigure(link, n, points, band)


def step_figure(doc: Mapping[str, Any]) -> StepFigure | None:
    """p50/p90 of each rank's train step and the compute/exposed-communication split of its profiled step."""
    rows = []
    runs = _runs(doc, "trainstep")
    for p in runs:
        facts, split = p.get("facts") or {}, (p.get("details") or {}).get("split") or {}
        p50 = _positive(facts.get("trainstep.step_p50_s"))
        if p50 is None or p.get("rank") is None:
            continue
        step = _positive(split.get("step_s"))
        share = (lambda key: min(1.0, max(0.0, _number(split.get(key)) / step))
                 if step and _number(split.get(key)) is not None else None)
        rows.append(StepRow(int(p["rank"]), p50, _positive(facts.get("trainstep.step_p90_s")),
                            share("compute_s"), share("exposed_s")))
    if not rows:
        return None
    slowest = _fact(runs, "trainstep.slowest_rank")
    return StepFigure(tuple(rows), slowest if isinstance(slowest, int) else None)


def scaling_figure(doc: Mapping[str, Any]) -> ScalingFigure | None:
    """The scaling probe's world sizes and growth series (rank 0 reports them)."""
    runs = _runs(doc, "scaling")
    sizes, throughput = _fact(runs, "scaling.world_sizes"), _fact(runs, "scaling.samples_per_s")
    if not (isinstance(sizes, list) and isinstance(throughput, list) and sizes and len(sizes) == len(throughput)):
        return None
    table = next((p["details"]["table"] for p in runs if (p.get("details") or {}).get("table")), [])
    growth = []
    for name in ("batch", "seq"):
        series = tuple((int(str(row[name]).lstrip("x")), float(row["step_s"])) for row in table
                       if isinstance(row, dict) and name in row and _positive(row.get("step_s"))
                       and str(row[name]).lstrip("x").isdigit() and int(str(row[name]).lstrip("x")) > 0)
        if series:
            growth.append((name, series, _number(_fact(runs, f"scaling.{name}_exponent"))))
    if not all(isinstance(k, int) and k > 0 for k in sizes) or not all(_positive(t) for t in throughput):
        return None
    return ScalingFigure(tuple(sizes), tuple(float(t) for t in throughput), tuple(growth))


def _tolerant(extract: Callable[[Mapping[str, Any]], Any], doc: Mapping[str, Any]) -> Any:
    """A figure whose data is malformed (a hand-edited or foreign report) is left out, not fatal to the report."""
    try:
        return extract(doc)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, ZeroDivisionError, OverflowError):
        return None


def figures(doc: Mapping[str, Any]) -> Figures:
    """All figures of ``doc``."""
    return Figures(*(_tolerant(f, doc) for f in (startup_figure, bandwidth_figure, step_figure, scaling_figure)))
