"""Two processes announcing the same global rank while another rank never appears: rank-env-inconsistent."""

from __future__ import annotations

import pytest

from tests.logs.helpers import analyse, shown


def _shown(rules, text: str) -> tuple[dict, list[str]]:
    facts = analyse(rules, text)
    return facts, shown(rules, facts)


def _lightning(ranks: list[int], world: int) -> str:
    return "".join(f"initializing ddp: GLOBAL_RANK: {r}, MEMBER: {r + 1}/{world}\n" for r in ranks)


@pytest.mark.parametrize("text", [
    # two nodes that both believe they are node 0: ranks 0-3 twice, 4-7 never
    _lightning([0, 1, 2, 3, 0, 1, 2, 3], 8),
    # the same with DETR-style and Accelerate announcements
    "".join(f"| distributed init (rank {r}): env://, world_size: 4\n" for r in (0, 1, 0, 1)),
    "Num processes: 4\n" + "".join(f"Process index: {r}\n" for r in (0, 1, 0, 1)),
])
def test_a_rank_claimed_twice_leaving_another_empty_is_rank_env_inconsistent(rules, text):
    facts, shown = _shown(rules, text)
    assert facts["log.ranks_announced_twice"]
    assert shown[0] == "rank-env-inconsistent"


@pytest.mark.parametrize("text", [
    _lightning([0, 1, 2, 3], 4),                 # every rank once
    _lightning([0, 1, 2, 3, 0, 1, 2, 3], 4),     # a restart: every rank again, none left out
    _lightning([0, 1, 0, 1], 8),                 # one node's part of a bigger world
    _lightning([0], 1) + _lightning([0], 2),     # two runs of different sizes, rank 0 printing
    _lightning([0], 2) + _lightning([0], 2),     # two attempts where only rank 0's output was kept
])
def test_complete_worlds_restarts_and_partial_logs_are_not_flagged(rules, text):
    facts, shown = _shown(rules, text)
    assert "log.ranks_announced_twice" not in facts
    assert "rank-env-inconsistent" not in shown
