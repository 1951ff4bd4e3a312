"""A live hang with the flight recorder switched off raises flight-recorder-disabled (decided in rules/checks)."""

from __future__ import annotations

import pytest

from troubleshooter.core.engine import Observations, evaluate
from troubleshooter.core.facts import Facts
from troubleshooter.core.ruleset import load_rules

HANG = [{"detail": "rank 1 is in barrier while ranks 0, 2 are in all_reduce", "rank": 1, "source": "attach"}]


@pytest.mark.parametrize("buffer_off, hang, expected", [(True, True, True), (False, True, False), (True, False, False)])
def test_flight_recorder_off_only_matters_in_a_hang(buffer_off: bool, hang: bool, expected: bool) -> None:
    facts = {"live.fr_buffer_off": buffer_off, **({"live.collective-mismatch": HANG} if hang else {})}
    ids = [f.id for f in evaluate(load_rules(), Observations(Facts.from_dict(facts, "attach")))]
    assert ("flight-recorder-disabled" in ids) is expected
