"""Locate the shipped knowledge base, probe plugins and templates.

In a wheel they live in ``troubleshooter/_data/``; in a source checkout (editable
install) they are the top-level ``rules/``, ``probes/`` and ``templates/`` folders.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def data_dir(name: str) -> Path:
    """Return the directory of a shipped data folder (``rules``, ``probes``, ``templates``)."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"the {name}/ folder is missing from this installation of troubleshooter")


def rules_dir() -> Path:
    """The shipped YAML knowledge base."""
    return data_dir("rules")


def probes_dir() -> Path:
    """The shipped probe plugins."""
    return data_dir("probes")


def templates_dir() -> Path:
    """The shipped Jinja report templates."""
    return data_dir("templates")
