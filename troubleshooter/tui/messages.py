"""Messages the TUI's workers post (named for past events)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from troubleshooter.run.session import Session


class ProbeStarted(Message):
    """Probes began running."""

    def __init__(self, probe_ids: list[str], purpose: str) -> None:
        super().__init__()
        self.probe_ids = probe_ids
        self.purpose = purpose


class ProbeProgress(Message):
    """A live status line from a running probe (every line is shown in the all-checks log)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class ProbeFinished(Message):
    """Probes finished; ``run`` holds their results and what they learned about the world."""

    def __init__(self, probe_ids: list[str], purpose: str, run: Session) -> None:
        super().__init__()
        self.probe_ids = probe_ids
        self.purpose = purpose
        self.run = run


class AnalysisFinished(Message):
    """Files were analysed; ``facts`` maps source ("scan", "logs") to facts, ``error`` says why not."""

    def __init__(self, paths: list[str], facts: dict, error: str = "") -> None:
        super().__init__()
        self.paths = paths
        self.facts = facts
        self.error = error


class InvestigationChanged(Message):
    """Answers or evidence changed: screens re-render from the investigation."""
