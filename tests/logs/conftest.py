"""Shared fixtures for the log-analyzer tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from troubleshooter.core.ruleset import load_rules

CORPUS = Path(__file__).parent / "corpus"


@pytest.fixture(scope="session")
def rules():
    """The shipped knowledge base (catalog + signatures)."""
    return load_rules()


def corpus_cases() -> list[tuple[str, Path, Path]]:
    """(name, log path, expectation path) for every corpus log."""
    cases = []
    for expect in sorted(CORPUS.glob("*.expect.yaml")):
        stem = expect.name[: -len(".expect.yaml")]
        log = next(p for p in (CORPUS / f"{stem}.log", CORPUS / f"{stem}.log.gz") if p.exists())
        cases.append((stem, log, expect))
    return cases
