"""The scanner against the corpus: exact expected ids per script, quiet correct scripts, quality table."""

from __future__ import annotations

import pytest
from .conftest import corpus_files, expected_ids, todo_misses
from .quality import format_table, measure

from troubleshooter.core.engine import Observations, evaluate
from troubleshooter.core.facts import Facts
from troubleshooter.core.ruleset import load_rules
from troubleshooter.scan import checker_ids, scan_paths

FILES = corpus_files()


def test_corpus_is_large_and_covers_every_checker():
    assert len(FILES) >= 40
    declared = set().union(*(expected_ids(p) for p in FILES))
    assert set(checker_ids()) <= declared, set(checker_ids()) - declared
    assert sum(1 for p in FILES if not expected_ids(p)) >= 15


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_script_gets_exactly_its_expected_ids(path):
    result = scan_paths([str(path)])
    assert result.internal_errors == []
    assert result.facts["scan.syntax_errors"] == []
    assert set(result.hits) == expected_ids(path) - todo_misses(path), {
        k: [h["detail"] for h in v] for k, v in result.hits.items()}
    for hits in result.hits.values():
        for hit in hits:
            assert hit["path"] == str(path) and hit["line"] >= 1 and hit["detail"] and isinstance(hit["vars"], dict)


@pytest.fixture(scope="module")
def rules():
    return load_rules()


@pytest.mark.parametrize("path", [p for p in FILES if not expected_ids(p)],
                         ids=[p.name for p in FILES if not expected_ids(p)])
def test_correct_script_has_no_warning_or_error(path, rules):
    facts = scan_paths([str(path)]).facts
    findings = evaluate(rules, Observations(Facts.from_dict(facts, "scan")))
    assert [f.id for f in findings if f.severity in ("error", "warning")] == []


def test_quality_table(capsys, tmp_path):
    table = measure()
    text = format_table(table)
    with capsys.disabled():
        print("\nscanner precision / recall per id over the corpus:\n" + text)
    assert all(row["precision"] == 1.0 for row in table.values()), text
