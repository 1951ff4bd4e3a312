"""The condition language: operators, three-valued logic, validation."""

from __future__ import annotations

import pytest

from troubleshooter.core import conditions
from troubleshooter.core.yamlspan import load_text

FACTS = {"a": 3, "b": 5.0, "flag": True, "off": False, "name": "eth0", "items": [1, 2], "empty": [], "s": "x"}


@pytest.mark.parametrize("cond, expected", [
    ({"fact": "a", "op": "equals", "value": 3}, True),
    ({"fact": "a", "op": "not_equals", "value": 3}, False),
    ({"fact": "a", "op": "lt", "ref": "b"}, True),
    ({"fact": "b", "op": "ge", "value": 5}, True),
    ({"fact": "a", "op": "gt", "value": "2"}, None),  # no numeric comparison with a string
    ({"fact": "flag", "op": "gt", "value": 0}, None),  # bools are not numbers here
    ({"fact": "name", "op": "matches", "value": "^eth\\d$"}, True),
    ({"fact": "name", "op": "in", "value": ["eth0", "ib0"]}, True),
    ({"fact": "name", "op": "not_in", "value": ["ib0"]}, True),
    ({"fact": "items", "op": "contains", "value": 2}, True),
    ({"fact": "items", "op": "nonempty"}, True),
    ({"fact": "empty", "op": "empty"}, True),
    ({"fact": "flag", "op": "is_true"}, True),
    ({"fact": "off", "op": "is_false"}, True),
    ({"fact": "gone", "op": "missing"}, True),
    ({"fact": "gone", "op": "exists"}, False),
    ({"fact": "gone", "op": "equals", "value": 1}, None),
    ({"not": {"fact": "gone", "op": "equals", "value": 1}}, None),  # unknown stays unknown
    ({"all": [{"fact": "a", "op": "equals", "value": 3}, {"fact": "gone", "op": "is_true"}]}, None),
    ({"all": [{"fact": "a", "op": "equals", "value": 4}, {"fact": "gone", "op": "is_true"}]}, False),
    ({"any": [{"fact": "gone", "op": "is_true"}, {"fact": "flag", "op": "is_true"}]}, True),
    ({"any": [{"fact": "gone", "op": "is_true"}, {"fact": "off", "op": "is_true"}]}, None),
    ({"fact": "a", "op": "lt", "ref": "gone"}, None),
    ({"finding": "x"}, True),
    ({"not": {"finding": "y"}}, True),
])
def test_evaluate(cond: dict, expected: bool | None) -> None:
    assert list(conditions.validate(cond)) == []
    assert conditions.evaluate(cond, FACTS, frozenset({"x"})) is expected


@pytest.mark.parametrize("text, message", [
    ("{fact: a, op: bigger, value: 1}", "unknown op 'bigger'"),
    ("{fact: a, op: equals}", "needs exactly one of 'value' or 'ref'"),
    ("{fact: a, op: exists, value: 1}", "takes no 'value' or 'ref'"),
    ("{all: []}", "expects a non-empty list"),
    ("{any: [{fact: a, op: equals, value: 1}, 3]}", "must be a mapping"),
    ("{fact: a, op: equals, value: 1, extra: 2}", "unexpected key(s) ['extra']"),
    ("{fact: a, op: matches, value: '('}", "bad regular expression"),
    ("{whatever: 1}", "needs exactly one of all / any / not / fact / finding"),
])
def test_validate_reports_problems_with_lines(text: str, message: str) -> None:
    problems = list(conditions.validate(load_text(text)))
    assert problems and message in problems[0][0]
    assert problems[0][1] == 1


def test_facts_and_findings_read() -> None:
    cond = load_text("{all: [{fact: a, op: lt, ref: b}, {not: {finding: f}}, {any: [{fact: c, op: exists}]}]}")
    assert sorted(k for k, _ in conditions.facts_read(cond)) == ["a", "b", "c"]
    assert list(conditions.findings_read(cond)) == ["f"]


def test_no_eval_of_rule_text() -> None:
    cond = {"fact": "a", "op": "equals", "value": "__import__('os').system('false')"}
    assert conditions.evaluate(cond, {"a": 1}) is False
