"""Ask for log files and training scripts to analyse (scripts are parsed, never run)."""

from __future__ import annotations

import shlex

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static


class AnalyseModal(ModalScreen[list[str] | None]):
    """Path entry; dismisses with the paths (``*.py`` and folders are scanned, other files read as logs)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def compose(self) -> ComposeResult:
        """Explanation and the path input."""
        with Vertical(classes="dialog"):
            yield Label("Analyse a log or a script", classes="dialog-title")
            yield Static("Paths separated by spaces (quote paths with spaces). .py files and folders are "
                         "scanned statically; other files (.log, .txt, .gz) are read as logs of a failed run.",
                         classes="dialog-text")
            yield Input(placeholder="train.py logs/rank0.log", id="paths")
            yield Static("", id="analyse-status", classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Split the paths and dismiss."""
        try:
            paths = shlex.split(event.value)
        except ValueError as exc:
            self.query_one("#analyse-status", Static).update(Text(f"Cannot read that: {exc}"))  # the user's text: no Rich markup
            return
        if not paths:
            self.query_one("#analyse-status", Static).update("Type at least one path.")
            return
        self.dismiss(paths)
