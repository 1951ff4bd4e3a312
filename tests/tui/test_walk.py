"""Pilot tests: walk the test trees end to end through the real screens, probes and export."""

from __future__ import annotations

import json

import pytest

from troubleshooter.tui.screens.counter_modal import CounterModal

SIZE = (100, 32)


async def settle(app, pilot) -> None:
    """Let probe workers finish and the screens re-render."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def choose(pilot, app, label: str) -> None:
    """Highlight the option with id ``label`` (else whose prompt contains it) and press Enter."""
    from textual.widgets import OptionList

    options = app.screen.query_one(OptionList)
    found = [i for i in range(options.option_count) if options.get_option_at_index(i).id == label] or [
        i for i in range(options.option_count) if label in str(options.get_option_at_index(i).prompt)]
    for index in found[:1]:
            options.highlighted = index
            options.focus()
            await pilot.press("enter")
            await pilot.pause()
            return
    raise AssertionError(f"no option {label!r} on {app.screen.id}")


async def test_port_hang_runs_probe_and_concludes(make_app, monkeypatch, tmp_path):
    monkeypatch.setenv("TUI_FAKE_PORT_OPEN", "0")
    app = make_app(offer_resume=False)
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, app, "tree:port-hang")
        assert app.screen.id == "walk"
        await choose(pilot, app, "answer:no")
        await settle(app, pilot)
        state = app.investigation.state()
        assert (state.kind, state.conclusions) == ("conclude", ["master-port-in-use"])
        assert "fake-port" in [r.probe for r in app.investigation.results]
        await pilot.press("d")
        await pilot.pause()
        assert app.screen.id == "diagnosis"
        await pilot.press("e")
        await pilot.pause()
        field = app.screen.query_one("#path")
        field.value = str(tmp_path / "out.json")
        await pilot.press("enter")
        await pilot.pause()
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["mode"] == "tui" and doc["symptom"] == "init_process_group never returns"
    assert doc["walk"]["path"] == ["ask-one-machine", "run-port", "end-port"]
    assert doc["walk"]["answers"] == {"ask-one-machine": "no"}
    assert doc["findings"][0]["id"] == "master-port-in-use"
    assert doc["findings"][0]["evidence"][0]["source"] == "walk"
    assert doc["facts"]["fake.port_open"] is False


async def test_slow_training_counter_and_evidence_gate(make_app, monkeypatch):
    monkeypatch.setenv("TUI_FAKE_COMM", "0.8")
    app = make_app(offer_resume=False)
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, app, "tree:slow-training")
        # the user tries to skip: "just tune NCCL" is countered, with an offer to verify
        await choose(pilot, app, "counter:just-tune-nccl")
        assert isinstance(app.screen, CounterModal)
        shown = " ".join(str(w.render()) for w in app.screen.query(".dialog-text"))
        assert "Most slow DDP jobs are not communication-bound" in shown and "Profile one training step" in shown
        await choose(pilot, app, "verify")
        await settle(app, pilot)
        assert app.investigation.facts()["trainstep.comm_exposed_fraction"] == 0.8
        assert app.investigation.state().node_id == "ask-tuned"  # verifying does not skip the question
        await choose(pilot, app, "answer:yes")
        await settle(app, pilot)
        state = app.investigation.state()
        assert (state.kind, state.conclusions) == ("conclude", ["communication-bound"])


async def test_evidence_gate_blocks_until_measured(make_app, monkeypatch):
    monkeypatch.setenv("TUI_FAKE_COMM", "0.9")
    app = make_app(offer_resume=False)
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, app, "tree:slow-training")
        await choose(pilot, app, "answer:yes")
        state = app.investigation.state()
        assert state.kind == "needs-evidence" and state.probes == ["fake-profile"]
        assert "Measure how much communication" in str(app.screen.query_one("#why").render())
        await choose(pilot, app, "run")
        await settle(app, pilot)
        assert app.investigation.state().kind == "conclude"


async def test_back_and_forward(make_app, monkeypatch):
    monkeypatch.setenv("TUI_FAKE_PORT_OPEN", "1")
    app = make_app(offer_resume=False)
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, app, "tree:port-hang")
        await choose(pilot, app, "answer:yes")
        assert app.investigation.state().node_id == "end-none"
        await pilot.press("b")
        await pilot.pause()
        assert app.investigation.state().node_id == "ask-one-machine"
        await pilot.press("f")
        await pilot.pause()
        assert app.investigation.state().node_id == "end-none"
        assert "ask-one-machine (yes)" in str(app.screen.query_one("#breadcrumb").render())


@pytest.mark.slow
async def test_wrong_results_with_real_gloo_collective(make_app):
    app = make_app(offer_resume=False)
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, app, "tree:wrong-results")
        await settle(app, pilot)
        results = [r for r in app.investigation.results if r.probe == "collective"]
        assert sorted(r.rank for r in results) == [0, 1] and all(r.status == "ok" for r in results)
        assert app.investigation.facts()["collective.allreduce_ok"] is True
        assert app.investigation.state().node_id == "ask-seed"
        await choose(pilot, app, "answer:no")
        state = app.investigation.state()
        assert (state.kind, state.conclusions) == ("conclude", ["unsynced-init-seed"])
        assert app.investigation.report()["world"]["backend"] == "gloo"


async def test_red_flags_ticked_from_facts(make_app, monkeypatch):
    monkeypatch.setenv("TUI_FAKE_PORT_OPEN", "0")
    app = make_app(offer_resume=False)
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, app, "tree:port-hang")
        await choose(pilot, app, "answer:no")
        await settle(app, pilot)
        await pilot.press("r")
        await pilot.pause()
        assert app.screen.id == "red-flags"
        status = {row.item["id"]: (row.status, row.auto) for row in app.screen.rows}
        assert status["port-closed"] == ("flagged", True)
        assert status["same-seed"] == ("open", False)
        await choose(pilot, app, "1")  # option id "1": the manual item "same-seed"
        status = {row.item["id"]: row.status for row in app.screen.rows}
        assert status["same-seed"] == "ticked"


async def test_analyse_a_script_adds_scan_findings(make_app, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\nmodel = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n")
    app = make_app(offer_resume=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("l")
        await pilot.pause()
        app.screen.query_one("#paths").value = str(script)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.investigation.analysed == [str(script)]
        assert "scan" in app.investigation.static_facts
        saved = json.loads(app.state_file.read_text())
        assert saved["analysed"] == [str(script)]


async def test_a_file_name_with_rich_markup_is_shown_as_text(make_app):
    """Paths and messages are the user's text: `[/x]` must not crash the notification, `[link=…]` must not act."""
    from troubleshooter.tui.messages import AnalysisFinished

    app = make_app(offer_resume=False)
    hostile = "No such file: '[/oops] [link=https://evil.example]click[/link] [bold]x'"
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(AnalysisFinished([hostile], {}, hostile))
        await pilot.pause()
        await pilot.pause()  # the toast is drawn: malformed markup would raise here
        shown = [n for n in app._notifications if n.message == hostile]
        assert shown and not shown[0].markup
