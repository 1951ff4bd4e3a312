"""Fixtures for the TUI tests: a small fixed knowledge base and deterministic probes, isolated state."""

from __future__ import annotations

from pathlib import Path

import pytest

from troubleshooter.core.registry import Registry
from troubleshooter.core.ruleset import load_rules

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def rules():
    """The test rules (three trees, a checklist, a rationalization)."""
    return load_rules(base=DATA / "rules")


@pytest.fixture(scope="session")
def registry():
    """Shipped probes plus the deterministic fake probes."""
    return Registry.load([DATA / "probes"])


@pytest.fixture
def make_app(rules, registry, tmp_path, monkeypatch):
    """Build a TroubleshooterApp over the test rules, with its recovery file in tmp_path."""
    from troubleshooter.tui.app import TroubleshooterApp
    from troubleshooter.run.options import RunOptions

    monkeypatch.setenv("TROUBLESHOOTER_STATE_DIR", str(tmp_path / "state"))

    def make(**kwargs):
        options = RunOptions(probe_dirs=(str(DATA / "probes"),), backend="gloo", nproc=2)
        return TroubleshooterApp(rules=rules, registry=registry, options=options, state_file=tmp_path / "state" / "recovery.json",
                                 **kwargs)
    return make
