"""Broken rule files produce precise, pinned errors (file:line, excerpt, help) and exit code 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from troubleshooter.cli import main
from troubleshooter.core.errors import RuleFileError
from troubleshooter.core.ruleset import load_rules

CASES = Path(__file__).resolve().parent.parent / "data" / "bad_rules"
REPO = CASES.parent.parent.parent


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_error_text_is_pinned(case: str) -> None:
    with pytest.raises(RuleFileError) as info:
        load_rules(base=CASES / case)
    text = info.value.message.replace(str(REPO) + os.sep, "")
    assert text + "\n" == (CASES / case / "expected.txt").read_text()


def test_every_error_names_file_and_line() -> None:
    for case in CASES.iterdir():
        with pytest.raises(RuleFileError) as info:
            load_rules(base=case)
        for issue in info.value.issues:
            assert issue.path.endswith(".yaml") and issue.line, issue.render()


def test_errors_are_collected_across_files(tmp_path: Path) -> None:
    for case in ("typo-key", "unknown-op", "bad-yaml"):
        for src in (CASES / case).rglob("*.yaml"):
            dst = tmp_path / src.relative_to(CASES / case)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_text(src.read_text())
    with pytest.raises(RuleFileError) as info:
        load_rules(base=tmp_path)
    assert {Path(i.path).name for i in info.value.issues} >= {"typo.yaml", "op.yaml", "broken.yaml"}
    assert info.value.message.endswith(f"{len(info.value.issues)} error(s) in 4 rule file(s)") or \
        "error(s) in" in info.value.message


def test_rules_check_cli_exit_code_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "check", str(CASES / "unknown-op")]) == 2
    err = capsys.readouterr().err
    assert "unknown op 'greater_than'" in err and "op.yaml:6" in err


def test_overlay_dir_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuleFileError) as info:
        load_rules([tmp_path / "nope"], base=CASES / "unknown-op")
    assert any("does not exist" in i.message for i in info.value.issues)
