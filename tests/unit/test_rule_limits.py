"""The budgets every rule file is held to: YAML expansion and numbers, regex backtracking, template rendering."""

from __future__ import annotations

import re
import time

import pytest

from troubleshooter.core.ruleset import load_rules
from troubleshooter.core.errors import RuleFileError
from troubleshooter.core.ruletext import render, render_text, template_problem, TemplateBudgetExceeded
from troubleshooter.core.saferegex import regex_problem
from troubleshooter.core.yamlspan import YamlError, load_text


def _alias_tree(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("levels", [6, 9, 30])
def test_alias_tree_is_refused_before_it_is_built(levels: int) -> None:
    start = time.monotonic()
    with pytest.raises(YamlError, match="through aliases") as info:
        load_text(_alias_tree(levels))
    assert time.monotonic() - start < 0.5
    assert info.value.line == 5  # a4 (66,430 nodes once expanded) is the first past the 20,000 budget


def test_small_alias_use_still_loads() -> None:
    assert load_text("base: &b {x: 1}\nother: *b\n") == {"base": {"x": 1}, "other": {"x": 1}}


@pytest.mark.parametrize("text,why", [
    ("a: &a [*a]\n", "recursive"),
    ("a: " + "[" * 100 + "]" * 100 + "\n", "levels deep"),
    ("when: {fact: x, op: gt, value: " + "9" * 5000 + "}\n", "too large"),
    ("when: {value: -1234567890123456789}\n", "too large"),
])
def test_structure_and_numbers_are_bounded(text: str, why: str) -> None:
    with pytest.raises(YamlError, match=why):
        load_text(text)


def test_ordinary_numbers_load() -> None:
    assert load_text("a: 123456789012345678\nb: 0x1f\nc: 1_000\nd: 2.5e+300\n") == \
        {"a": 123456789012345678, "b": 31, "c": 1000, "d": 2.5e300}


CATASTROPHIC = [r"(a+)+$", r"(a*)*b", r"(\w+\s*)+$", r"(.*,)+x", r"(a|aa)+$", r"(a|a)+$", r"(x+x+)+y",
                r"^(\d+)*$", r"(?:[a-z]+\.?)+@", r"(\s*\S*)*:", r"(?>x(a+)+y)", r"(ab|ab)*c"]
LINEAR = [r"(\d+\.)+x", r"(?:\s+\w+)*", r"foo (bar|baz)+", r"(?:[\w.]+/)*file", r"a+b+c+", r"(?:ab)+",
          r"(a++)+$", r"(?>a+)+$", r"\d{1,3}(?:,\d{3})*", r"(?:\w+ )+done", r"NCCL WARN .*"]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_catastrophic_patterns_are_refused(pattern: str) -> None:
    assert "catastrophic backtracking" in (regex_problem(pattern) or "")


@pytest.mark.parametrize("pattern", LINEAR)
def test_linear_patterns_are_accepted(pattern: str) -> None:
    assert regex_problem(pattern) is None


def test_refused_pattern_really_backtracks() -> None:
    """The shape the check refuses is the one that is slow (a few thousand times slower at 20 characters)."""
    start = time.monotonic()
    re.search(r"(a+)+$", "a" * 20 + "!")
    assert time.monotonic() - start > 0.01


def test_invalid_pattern_is_reported() -> None:
    assert (regex_problem("(oops") or "").startswith("bad regular expression")


HOSTILE_TEMPLATES = [
    "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}done",
    "{{ 'a' * 1000000000 }}", "{{ [1] * 1000000000 }}", "{{ 2 ** 99999999 }}",
    "{{ '%999999999d' % 1 }}", "{{ '%999999999d'|format(1) }}", "{{ '{:>999999999}'.format(1) }}",
    "{{ '{:{}}'.format(1, 999999999) }}", "{{ range(99999)|list|length }}",
    "{% set s = 'x' * 60000 %}{{ range(99999)|map('replace', 'x', s)|join }}",
    "{% set s = 'x' * 60000 %}{{ (s|replace('x', s))|replace('x', s) }}",
    "{% macro f(s, n) %}{% if n %}{{ f(s ~ s, n - 1) }}{{ f(s ~ s, n - 1) }}{% endif %}{% endmacro %}{{ f('a', 40) }}",
    "{% for i in range(99999) recursive %}{{ loop(range(99999)) }}{% endfor %}",
    "{% for a in 'x' * 50000 %}{% for b in 'y' * 50000 %}{% endfor %}{% endfor %}",
]


@pytest.mark.parametrize("template", HOSTILE_TEMPLATES)
def test_hostile_templates_stop_within_the_budget(template: str) -> None:
    start = time.monotonic()
    text = render_text(template, {})  # over budget: what could be rendered, never a hang
    assert time.monotonic() - start < 1.0
    assert "{{" not in text and "{%" not in text
    assert template_problem(template) is not None


def test_budget_is_per_render_and_ordinary_text_renders() -> None:
    with pytest.raises(TemplateBudgetExceeded):
        render("{% for i in range(30000) %}{% endfor %}", {})
    text = "{{ r | join(', ') }} {{ '%.0f' | format(x * 100) }} {% for i in range(3) %}{{ i }}{% endfor %}"
    assert render(text, {"r": [1, 2], "x": 0.5}) == "1, 2 50 012"
    assert template_problem(text) is None


def test_template_tags_and_filters_outside_rule_text_are_refused() -> None:
    assert "not allowed" in template_problem("{% macro m() %}{% endmacro %}")[1]
    assert "center" in template_problem("{{ 'a' | center(9) }}")[1]


def _finding(root, fid: str, **fields) -> None:
    body = {"id": fid, "title": "t", "severity": "warning", "category": "code", "why": "w", "fix": "f",
            "references": "[x]", **fields}
    (root / "findings").mkdir(parents=True, exist_ok=True)
    (root / "findings" / f"{fid}.yaml").write_text("".join(f"{k}: {v}\n" for k, v in body.items()))


def _messages(exc: RuleFileError) -> list[str]:
    return [f"{i.path.rsplit('/', 2)[-2] if '/' in i.path else ''}/{i.path.rsplit('/', 1)[-1]}:{i.line}: {i.message}"
            for i in exc.value.issues]


def test_misplaced_and_misnamed_files_are_errors(tmp_path) -> None:
    _finding(tmp_path, "site-ok")
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "rule.yaml").write_text("id: x\n")
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "c.yml").write_text("id: c\n")
    (tmp_path / "live").mkdir()
    (tmp_path / "live" / "other.yaml").write_text("x: 1\n")
    (tmp_path / "notes.md").write_text("not yaml: ignored\n")
    with pytest.raises(RuleFileError) as exc:
        load_rules([tmp_path])
    text = "\n".join(_messages(exc))
    assert "extra/rule.yaml is not a place rules are read from" in text
    assert "live/other.yaml is not a place" in text
    assert ".yml file would never be read" in text
    assert len(exc.value.issues) == 3


def test_overlay_templates_are_checked_but_ordinary_overlays_load(tmp_path) -> None:
    _finding(tmp_path, "site-ok", fix="'Restart {{ hit.host | default(\"the node\") }}'")
    assert "site-ok" in load_rules([tmp_path]).findings
    _finding(tmp_path, "site-loop", fix="'{% for i in range(99999) %}{% for j in range(9) %}{% endfor %}{% endfor %}'")
    with pytest.raises(RuleFileError, match="rendering budget"):
        load_rules([tmp_path])


def test_cases_files_are_validated(tmp_path) -> None:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "nothing-here.cases.yaml").write_text("fires:\n  - {a.b: 1}\nquiet: [3]\n")
    with pytest.raises(RuleFileError) as exc:
        load_rules([tmp_path], verify=True)
    text = "\n".join(_messages(exc))
    assert "quiet[0] must be a mapping of facts" in text
    assert "fixture cases for a check 'nothing-here' that does not exist" in text


def test_a_huge_directory_is_refused_quickly(tmp_path, monkeypatch) -> None:
    """``--rules ~`` by mistake: the layout walk stops at its budget instead of walking the whole tree."""
    from troubleshooter.core import ruleset

    monkeypatch.setattr(ruleset, "MAX_LAYOUT_ENTRIES", 50)
    for i in range(60):
        (tmp_path / f"note{i}.txt").write_text("x")
    with pytest.raises(RuleFileError, match="more than 50 files under this rules directory"):
        load_rules([tmp_path])
