"""Snapshots of the main screens at 80×24 and 120×40 (pytest-textual-snapshot; update with --snapshot-update)."""

from __future__ import annotations

import pytest

from troubleshooter.core.launchers import launcher_table

from .test_walk import choose, settle

SIZES = [(80, 24), (120, 40)]


@pytest.fixture
def snap_app(make_app, monkeypatch):
    """An app whose screens do not depend on this machine (no launcher variables, a fixed GPU line)."""
    for var in launcher_table().all_variables():
        monkeypatch.delenv(var, raising=False)
    return make_app(offer_resume=False, detect_gpus=lambda: "none (test)")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_home(snap_compare, snap_app, size):
    assert snap_compare(snap_app, terminal_size=size, press=["_"])


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_walk_question_with_counter(snap_compare, snap_app, size):
    async def open_tree(pilot):
        await choose(pilot, snap_app, "tree:slow-training")
    assert snap_compare(snap_app, terminal_size=size, run_before=open_tree)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_evidence_gate(snap_compare, snap_app, size):
    async def to_gate(pilot):
        await choose(pilot, snap_app, "tree:slow-training")
        await choose(pilot, snap_app, "answer:yes")
    assert snap_compare(snap_app, terminal_size=size, run_before=to_gate)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_diagnosis(snap_compare, snap_app, size, monkeypatch):
    monkeypatch.setenv("TUI_FAKE_PORT_OPEN", "0")

    async def to_diagnosis(pilot):
        await choose(pilot, snap_app, "tree:port-hang")
        await choose(pilot, snap_app, "answer:no")
        await settle(snap_app, pilot)
        await pilot.press("d")
        await pilot.pause()
    assert snap_compare(snap_app, terminal_size=size, run_before=to_diagnosis)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_red_flags(snap_compare, snap_app, size):
    async def to_checklist(pilot):
        await pilot.press("r")
        await pilot.pause()
    assert snap_compare(snap_app, terminal_size=size, run_before=to_checklist)
