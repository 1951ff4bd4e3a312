"""Bounded fuzzing in the normal suite: each parser on generated input raises only its documented errors.

Longer runs: ``python -m tests.fuzz TARGET --seconds N`` (the same targets and strategies).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz.runner import problem
from tests.fuzz.targets import TARGETS

EXAMPLES = {"logs": 60, "conditions": 80, "rules": 25, "report": 30, "flight_recorder": 60}


def _fuzz_test(name: str):
    target = TARGETS[name]

    @settings(max_examples=EXAMPLES[name], deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(target.inputs())
    def check(data: bytes) -> None:
        found = problem(target, data)
        assert found is None, found

    return check


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_parser_raises_only_documented_errors(name: str) -> None:
    _fuzz_test(name)()
