"""Export the diagnosis to Markdown, HTML or JSON (the CLI's templates; the file extension picks the format)."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from troubleshooter.core.errors import TroubleshooterError

SUFFIXES = {"md": ".md", "html": ".html", "json": ".json"}


class ExportModal(ModalScreen[str | None]):
    """Ask for a path and write the report there; dismisses with the path written (None if cancelled)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, default: str = "ddp-diagnosis.html") -> None:
        super().__init__()
        self.default = default

    def compose(self) -> ComposeResult:
        """Path input, format buttons, status line."""
        with Vertical(classes="dialog"):
            yield Label("Export the report", classes="dialog-title")
            yield Static("The extension picks the format: .md, .html or .json. Enter writes the file.",
                         classes="dialog-text")
            yield Input(value=self.default, id="path")
            with Horizontal(classes="buttons"):
                yield Button("Markdown", id="md")
                yield Button("HTML", id="html")
                yield Button("JSON", id="json")
            yield Static("", id="export-status", classes="hint")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Switch the path's extension to the chosen format."""
        field = self.query_one("#path", Input)
        path = Path(field.value or self.default)
        field.value = str(path.with_suffix(SUFFIXES[event.button.id]))
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Write the report."""
        path = event.value.strip() or self.default
        if Path(path).suffix.lower() not in (".md", ".markdown", ".html", ".htm", ".json"):
            self.query_one("#export-status", Static).update("Use a .md, .html or .json file name.")
            return
        try:
            fmt = self.app.export(path)
        except TroubleshooterError as exc:
            self.query_one("#export-status", Static).update(exc.message)
            return
        self.app.notify(f"Report written to {path} ({fmt})", title="Exported")
        self.dismiss(path)
