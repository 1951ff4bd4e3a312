"""The help screen (``?``): how the troubleshooter works and its keys."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Markdown

HELP = """\
Pick the **symptom** that matches your problem. The troubleshooter asks one question at a
time, runs **probes** (real measurements) where a question can be settled by evidence, and
ends with a **diagnosis**: findings root cause first, the evidence, and the fix.

| key | does |
|---|---|
| ↑ ↓ Enter | choose an answer / an action (the mouse works too) |
| b / f | back to the previous question / forward again |
| Esc | cancel a running probe, close a dialog, go back |
| s | "I want to skip this" (see why it matters, verify instead) |
| d | diagnosis so far (export with **e**) |
| r | red-flag checklist (Space ticks an item) |
| v | show / hide the evidence panel |
| h | home: the list of symptoms |
| Ctrl+T | light / dark theme |
| Ctrl+Q | quit (offers to export; answers are kept for next time) |

Every answer and probe result is saved to a recovery file as you go, so quitting or a crash
never loses them: the next start offers to resume.
"""


class HelpModal(ModalScreen[None]):
    """Keys and the idea of the tool."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss(None)", "Close")]

    def compose(self) -> ComposeResult:
        """The help text."""
        with Vertical(classes="dialog help-dialog"):
            yield Label("Help", classes="dialog-title")
            yield Markdown(HELP)
