"""The TUI's "Loss diverges or ranks disagree" walk runs the parity probe and ends at the measured diagnosis."""

from __future__ import annotations

from pathlib import Path

import pytest

from troubleshooter.core.registry import Registry
from troubleshooter.core.ruleset import load_rules
from troubleshooter.run.options import RunOptions

pytestmark = pytest.mark.slow
MODELS = Path(__file__).resolve().parents[1] / "data" / "parity"


async def test_ranks_diverge_walk_concludes_from_the_parity_probe(tmp_path, monkeypatch):
    from troubleshooter.tui.app import TroubleshooterApp
    from textual.widgets import OptionList

    monkeypatch.setenv("TROUBLESHOOTER_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("PYTHONPATH", str(MODELS))
    options = RunOptions(model="parity_models:batchnorm", backend="gloo", nproc=2, cwd=str(MODELS))
    app = TroubleshooterApp(rules=load_rules(), registry=Registry.load([], entry_points=False), options=options,
                            state_file=tmp_path / "state" / "recovery.json", offer_resume=False)
    async with app.run_test(size=(100, 32)) as pilot:
        options_list = app.screen.query_one(OptionList)
        index = next(i for i in range(options_list.option_count)
                     if options_list.get_option_at_index(i).id == "tree:ranks-diverge")
        options_list.highlighted = index
        options_list.focus()
        await pilot.press("enter")
        for _ in range(3):
            await pilot.pause()
            await app.workers.wait_for_complete()
        await pilot.pause()
        assert sorted(r.rank for r in app.investigation.results if r.probe == "parity") == [0, 1]
        state = app.investigation.state()
        assert (state.kind, state.conclusions) == ("conclude", ["batchnorm-not-synced"])
        assert "norm.running_mean" in str(app.investigation.report()["findings"])
