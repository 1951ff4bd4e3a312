"""Session safety: quitting mid-walk keeps the answers; the next start offers to resume them."""

from __future__ import annotations

import json

from troubleshooter.tui.screens.choice_modal import ChoiceModal
from .test_walk import SIZE, choose


async def test_quit_mid_walk_keeps_answers_and_resumes(make_app, tmp_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, app, "tree:slow-training")
        await choose(pilot, app, "answer:yes")  # stops at the evidence gate: mid-walk
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceModal)
        await choose(pilot, app, "quit")
    assert app.return_code == 0
    saved = json.loads(app.state_file.read_text())
    assert saved["tree"] == "slow-training" and saved["answers"] == {"ask-tuned": "yes"}

    again = make_app()
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(again.screen, ChoiceModal)
        await choose(pilot, again, "resume")
        assert again.screen.id == "walk"
        state = again.investigation.state()
        assert state.node_id == "end-comm" and state.kind == "needs-evidence"
        assert again.investigation.report()["walk"]["answers"] == {"ask-tuned": "yes"}


async def test_every_answer_is_saved_before_quitting(make_app):
    app = make_app(offer_resume=False)
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, app, "tree:port-hang")
        await choose(pilot, app, "answer:yes")
        saved = json.loads(app.state_file.read_text())  # written at once, not at exit: a crash loses nothing
        assert saved["answers"] == {"ask-one-machine": "yes"}


async def test_start_fresh_discards_the_saved_session(make_app):
    app = make_app(offer_resume=False)
    async with app.run_test(size=SIZE) as pilot:
        await choose(pilot, app, "tree:port-hang")
        await choose(pilot, app, "answer:yes")
    again = make_app()
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await choose(pilot, again, "fresh")
        assert again.screen.id == "home" and not again.state_file.exists()
