"""Figures, charts and readable values: what the Measurements section and the per-rank table show."""

from __future__ import annotations

import itertools
import os
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.render import worlds
from tests.render.test_render import GOLD, HERE, scrub
from troubleshooter.core.engine import render_text
from troubleshooter.core.values import readable
from troubleshooter.report import charts
from troubleshooter.report.figures import expectation_band, figures, load_expectations
from troubleshooter.report.render import render

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("key, value, shown", [
    ("trainstep.step_p50_s", 0.02647850149998021, "26.5 ms"),
    ("collective.latency_us", 405.7, "406 µs"),
    ("collective.busbw_bytes", 16777216, "16 MiB"),
    ("collective.busbw_gbps", 0.925, "0.925 GB/s"),
    ("trainstep.comm_exposed_fraction", 0.4961788889564419, "49.6%"),
    ("trainstep.ids_per_s", 42670.12, "42,670/s"),
    ("x.count", 42670.0, "42,670"),
    ("x.tiny", 1.2e-7, "0.00000012"),
    ("launcher.master_port", 46337, "46337"),
    ("net.master_reachable", False, "no"),
    ("startup.phase_s", {"init": 0.1481, "ddp-import": 1.3531}, "init: 148 ms; ddp-import: 1.35 s"),
    ("world.stuck_ranks", [2, 3], "2, 3"),
    ("net.interfaces", {"lo": {"up": True, "mtu": 65536, "ipv4": ["127.0.0.1"]}}, "lo: up, mtu: 65536, ipv4: 127.0.0.1"),
])
def test_readable_values_use_units_and_no_reprs(key, value, shown) -> None:
    assert readable(key, value) == shown


def test_no_fact_value_reads_like_python_or_json() -> None:
    for doc in (worlds.healthy(), worlds.synthetic_world(16)):
        for key, value in [*doc["facts"].items(), *(kv for r in doc["ranks"] for kv in r["facts"].items())]:
            text = readable(key, value)
            assert not re.search(r"[{}\[\]]|\d e[+-]\d|True|False|None", text), (key, text)


def test_rule_text_never_shows_jinja() -> None:
    assert render_text("rank {{ rank }} is {{ behind_s | round(2) }} s behind", {"rank": 3}) == "rank 3 is ? s behind"
    assert render_text("{% if x %}x{% endif %}{{ y.z | join(', ') }} ok", {}) == "? ok"


def test_figures_of_a_recorded_run() -> None:
    figs = figures(worlds.with_scaling())
    assert figs.startup.phases[0] == "init" and [r.rank for r in figs.startup.rows] == [0, 1]
    assert figs.startup.late_rank == 1 and figs.startup.late_phase == "first-step"  # the late rank's own verdict
    assert figs.bandwidth.link == "gloo/loopback" and [p[0] for p in figs.bandwidth.points][-1] == 16 * 2 ** 20
    assert (figs.bandwidth.band.low_gbps, figs.bandwidth.band.high_gbps) == (0.36, 0.93)
    assert figs.bandwidth.band.measured_range and "measured by this project" in figs.bandwidth.band.source
    assert [r.rank for r in figs.steps.rows] == [0, 1] and figs.steps.slowest_rank == 1
    assert 0 < figs.steps.rows[0].compute_share < 1 and figs.steps.rows[0].p90_s > figs.steps.rows[0].p50_s
    assert figs.scaling.world_sizes == (1, 2) and figs.scaling.efficiency[-1] == pytest.approx(354.63 / 2 / 527.87, rel=1e-4)
    assert [name for name, _, _ in figs.scaling.growth] == ["batch", "seq"]


def test_hung_world_marks_the_ranks_with_no_report() -> None:
    figs = figures(worlds.hung())
    assert figs.startup.missing == (2, 3) and figs.bandwidth is None
    svg = charts.startup_chart(figs.startup)
    assert svg.count("no start-up report") == 2


def test_expectation_band_prefers_the_row_for_the_hardware() -> None:
    table = load_expectations()
    h100 = expectation_band({**table, "links": table["links"] + [
        {"id": "h100-intranode", "backend": "nccl", "transport": "intranode", "gpu_match": "H100", "gpus": 8,
         "expected_busbw_gbps": 370, "slow_below_gbps": 185, "source": "s"}]}, "nccl/intranode", ["NVIDIA H100 80GB HBM3"], 8)
    assert (h100.link_id, h100.low_gbps, h100.high_gbps) == ("h100-intranode", 185, 370)
    generic = expectation_band(table, "nccl/intranode", ["NVIDIA A10"], 2)
    assert (generic.link_id, generic.low_gbps, generic.high_gbps) == ("nccl-intranode-floor", 5, 21)
    assert expectation_band(table, "gloo/tcp").high_gbps == 1.073
    assert expectation_band(table, "mpi/shm") is None


@pytest.mark.parametrize("make", [worlds.with_scaling, worlds.hung, lambda: worlds.synthetic_world(64)])
def test_every_chart_is_valid_svg_with_a_title_and_description(make) -> None:
    html = render(make(), "html")
    svgs = re.findall(r"<svg class=\"chart\".*?</svg>", html, re.S)
    assert svgs
    for svg in svgs:
        root = ET.fromstring(svg)
        assert root.get("role") == "img"
        title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
        assert title is not None and title.text and desc is not None and desc.text
        assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"


def test_labels_are_escaped_in_svg_and_markdown() -> None:
    doc = worlds.healthy()
    for p in doc["probes"]:
        if p["name"] == "startup":
            p["facts"]["startup.phase_s"] = {"<script>alert(1)</script>": 0.1, **p["facts"]["startup.phase_s"]}
    for r in doc["ranks"]:
        r["host"] = "evil|<b>host</b>"
    html, md = render(doc, "html"), render(doc, "md")
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>host</b>" not in html and "<b>host</b>" not in md
    assert "| evil\\|&lt;b&gt;host&lt;/b&gt; |" in md


def test_world_results_appear_once_and_ranks_are_columns() -> None:
    html = render(worlds.healthy(), "html")
    assert html.count("<tr><td>16 MiB</td>") == 1  # the bandwidth sweep: a world result, shown with its chart only
    assert not re.search(r"<summary>\w+ \(rank \d+\)", html) and "phase</th><th>rank 0</th><th>rank 1</th>" in html
    big = render(worlds.synthetic_world(64), "html")
    per_rank = big[big.index("<h2>Per rank</h2>"):big.index("<h2>Facts</h2>")]
    assert per_rank.count("<table>") == 4 + 1  # 64 ranks in blocks of 16, then the values every rank shares
    assert "<th>rank 15</th></tr>" in per_rank and "<tr><th></th><th>rank 16</th>" in per_rank


def test_markdown_shows_the_figures_as_tables_and_sparklines() -> None:
    md = render(worlds.with_scaling(), "md")
    assert "## Measurements" in md and "| message size | time | busbw |" in md
    assert re.search(r"`[▁▂▃▄▅▆▇█]{4}` Bus bandwidth", md)
    assert "| fitted exponent | 1.1 |" in md or "| fitted exponent |" in md


@pytest.mark.parametrize("fmt, name", [("html", "measured.html"), ("md", "measured.md")])
def test_gold_with_every_chart(fmt: str, name: str) -> None:
    actual = scrub(render(worlds.with_scaling(), fmt))
    gold = GOLD / name
    if not gold.exists() or os.environ.get("UPDATE_GOLD"):
        gold.write_text(actual)
    if actual != gold.read_text():
        (HERE / f"actual_{name}").write_text(actual)
        pytest.fail(f"{name} differs from the gold file; actual output saved to tests/render/actual_{name}")


def test_user_text_in_markdown_tables_stays_inert() -> None:
    doc = worlds.healthy()
    doc["world"]["launcher"] = "slurm|<img src=x onerror=alert(1)>"
    doc["run"] = {"command": "torchrun | tee <log>"}
    doc["nodes"] = [{"host": "<b>n1</b>|x", "ranks": "0-1"}]
    md = render(doc, "md")
    assert "<img" not in md and "<b>" not in md and "<log>" not in md
    assert "| launcher | slurm\\|&lt;img src=x onerror=alert(1)&gt; |" in md
    assert "| &lt;b&gt;n1&lt;/b&gt;\\|x | 0-1 |" in md


JUNK = st.recursive(st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=True) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(path=st.sampled_from([("collective", "details", "sweep"), ("startup", "facts", "startup.phase_s"),
                             ("trainstep", "details", "split"), ("trainstep", "facts", "trainstep.step_p50_s"),
                             ("scaling", "facts", "scaling.samples_per_s"), ("scaling", "details", "table")]),
       junk=JUNK)
def test_malformed_measurements_never_break_the_report(path, junk) -> None:
    doc = worlds.with_scaling()
    name, part, key = path
    for probe in doc["probes"]:
        if probe["name"] == name:
            probe[part][key] = junk
    html = render(doc, "html")
    assert "<h2>Findings</h2>" in html and render(doc, "md").startswith("# DDP diagnosis")


NUMBER = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**6, 10**15) | st.just(0)


@settings(max_examples=80, deadline=None)
@given(values=st.lists(NUMBER, min_size=12, max_size=12))
@example(values=[0.0] * 4 + [1.1125369292536007e-308] + [0.0] * 7)  # a denormal once overflowed a ratio to inf
def test_odd_numbers_in_well_formed_measurements_never_break_the_report(values) -> None:
    doc = worlds.with_scaling()
    v = itertools.cycle(values)
    for probe in doc["probes"]:
        if probe["name"] == "collective":
            probe["details"]["sweep"] = [{"bytes": next(v), "busbw_gbps": next(v), "time_us": next(v)},
                                         {"bytes": 2 ** 20, "busbw_gbps": next(v), "time_us": 5.0}]
        elif probe["name"] == "startup":
            probe["facts"]["startup.phase_s"] = {"init": next(v), "ddp-wrap": 0.1}
        elif probe["name"] == "trainstep":
            probe["facts"]["trainstep.step_p50_s"], probe["facts"]["trainstep.step_p90_s"] = next(v), 0.05
            probe["details"]["split"] = {"step_s": next(v), "compute_s": 0.01, "exposed_s": next(v)}
        elif probe["name"] == "scaling" and probe["facts"]:
            probe["facts"]["scaling.samples_per_s"] = [next(v), 300.0]
            probe["details"]["table"] = [{"batch": "x1", "step_s": next(v)}, {"batch": "x2", "step_s": 0.1}]
    html, md = render(doc, "html"), render(doc, "md")
    assert "<h2>Findings</h2>" in html and md.startswith("# DDP diagnosis")
    svg = "".join(re.findall(r"<svg class=\"chart\".*?</svg>", html, re.S))
    assert not re.search(r"\b(nan|inf)\b", svg, re.I)
