"""The step-time chart on the diagnosis screen (80×24 snapshot) and in the evidence panel."""

from __future__ import annotations

import pytest

from tests.render import worlds
from troubleshooter.core.probe import ProbeResult
from troubleshooter.report.figures import step_figure
from troubleshooter.tui.widgets.step_chart import MAX_ROWS, step_text

from .test_snapshots import snap_app  # noqa: F401 - fixture
from .test_walk import settle


def recorded_results(doc: dict) -> list[ProbeResult]:
    return [ProbeResult.from_dict(p) for p in doc["probes"] if p["name"] in ("trainstep", "collective", "network")]


def test_diagnosis_shows_the_step_chart_at_80x24(snap_compare, snap_app) -> None:  # noqa: F811
    async def to_diagnosis(pilot):
        from troubleshooter.tui.screens.diagnosis_screen import DiagnosisScreen

        await settle(snap_app, pilot)
        snap_app.investigation.results.extend(recorded_results(worlds.healthy()))
        await snap_app.push_screen(DiagnosisScreen())
        await pilot.pause()
    assert snap_compare(snap_app, terminal_size=(80, 24), run_before=to_diagnosis)


def test_bars_follow_the_measurements() -> None:
    fig = step_figure(worlds.healthy())
    lines = step_text(fig, 60).plain.splitlines()
    r0, r1 = (next(line for line in lines if line.startswith(f"r{r} ")) for r in (0, 1))
    assert r0.endswith("26.5 ms") and r1.endswith("25.4 ms")
    assert all(len(line) <= 60 for line in lines)
    bars = {r: line.split()[1] for r, line in ((0, r0), (1, r1))}
    assert bars[0].rstrip("─┤").count("█") > bars[1].rstrip("─┤").count("█")  # 26.5 ms is the longer bar


def test_big_worlds_get_a_sparkline_and_the_slowest_rank() -> None:
    fig = step_figure(worlds.synthetic_world(64))
    text = step_text(fig, 76).plain
    assert "p50 r0-63 " in text and "█" in text.splitlines()[1]
    rank_lines = [line for line in text.splitlines() if line.startswith("r")]
    assert len(rank_lines) <= MAX_ROWS and any(line.startswith("r42 ") for line in rank_lines)


@pytest.mark.asyncio
async def test_evidence_panel_shows_readable_values_and_the_chart(snap_app) -> None:  # noqa: F811
    from troubleshooter.tui.widgets.evidence_panel import EvidencePanel

    results = recorded_results(worlds.healthy())
    async with snap_app.run_test(size=(120, 40)) as pilot:
        panel = EvidencePanel()
        await snap_app.screen.mount(panel)
        panel.show(results, {}, {}, [])
        await pilot.pause()
        text = panel.render().plain
    assert "step time per rank" in text and "r1 " in text and "25.4 ms" in text
    assert "net.interfaces:\n" in text and "{" not in text  # a mapping is a small table: one row per interface
    assert any(line.split()[:4] == ["lo", "yes", "65536", "127.0.0.1"] for line in text.splitlines()), text
    assert "collective.algbw_gbps = 0.925 GB/s" in text and "trainstep.accum_sync_s = 102 ms" in text


@pytest.mark.asyncio
async def test_evidence_panel_masks_secrets_like_the_reports(snap_app) -> None:  # noqa: F811
    from troubleshooter.tui.widgets.evidence_panel import EvidencePanel

    token = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    result = ProbeResult("launcher", status="error", message=f"login failed with token {token}",
                         facts={"launcher.env": {"HF_TOKEN": token, "MASTER_PORT": "29500"}})
    async with snap_app.run_test(size=(120, 40)) as pilot:
        panel = EvidencePanel()
        await snap_app.screen.mount(panel)
        panel.show([result], {}, {}, [])
        await pilot.pause()
        text = panel.render().plain
    assert "MASTER_PORT" in text and "29500" in text and "login failed" in text
    assert "hf_AbC" not in text
