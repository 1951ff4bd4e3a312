"""Shown when a worker fails unexpectedly: what was being done and the error, never a silent hang."""

from __future__ import annotations

import traceback

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static


class ErrorModal(ModalScreen[None]):
    """An error from a background task, with the last frames of its traceback."""

    BINDINGS = [Binding("escape,enter", "dismiss(None)", "Close")]

    def __init__(self, doing: str, error: BaseException | None) -> None:
        super().__init__()
        self.doing, self.error = doing or "a background task", error

    def compose(self) -> ComposeResult:
        """Title, message, traceback tail."""
        err = self.error
        message = getattr(err, "message", None) or f"{type(err).__name__}: {err}"
        tail = "".join(traceback.format_exception(err)[-6:]) if err is not None else ""
        with Vertical(classes="dialog error-dialog"):
            yield Label(f"Something went wrong while {self.doing}", classes="dialog-title")
            yield Static(message, classes="dialog-text", markup=False)
            with VerticalScroll(classes="traceback"):
                yield Static(tail, markup=False)
            yield Static("Your answers are saved. Press Esc to continue.", classes="hint")
