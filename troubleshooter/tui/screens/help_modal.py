"""The help screen (``?``): how the troubleshooter works and its keys."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Markdown

HELP = """\
Pick the **symptom** that matches your problem. The troubleshooter asks one question at a
time, runs **probes** (real measurements) where a question can be settled by evidence, and
ends with a **diagnosis**: findings root cause first, the evidence, and the fix.

- **↑ ↓ Enter**: choose an answer or an action (the mouse works too)
- **b / f**: back to the previous question / forward again
- **Esc**: stop waiting for a probe, close a dialog, go back
- **s**: "I want to skip this": why it matters, and how to verify instead
- **d**: the diagnosis so far (**e** exports Markdown, HTML or JSON)
- **r**: the red-flag checklist (Space ticks an item)
- **v**: show or hide the evidence panel (hidden under 100 columns)
- **h**: home, the list of symptoms
- **Ctrl+T**: light or dark theme
- **Ctrl+Q**: quit (offers to export; your answers are kept for next time)

Every answer and probe result is saved to a recovery file as you go, so quitting or a crash
never loses them: the next start offers to resume.
"""


class HelpModal(ModalScreen[None]):
    """Keys and the idea of the tool."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss(None)", "Close")]

    def compose(self) -> ComposeResult:
        """The help text."""
        with VerticalScroll(classes="dialog help-dialog"):
            yield Label("Help", classes="dialog-title")
            yield Markdown(HELP)
