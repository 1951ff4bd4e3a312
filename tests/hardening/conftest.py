"""Shared fixtures of the hardening tests: a saved report to re-render."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def saved_report(tmp_path: Path) -> Path:
    """A valid saved report (one error finding) on disk."""
    from tests.render.test_render import sample_doc

    path = tmp_path / "r.json"
    path.write_text(json.dumps(sample_doc()))
    return path
