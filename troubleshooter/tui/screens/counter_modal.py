"""Where the user tries to skip a step: the rationalization, the reality, and an offer to verify instead."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option


class CounterModal(ModalScreen[str | None]):
    """Explain why a shortcut misleads (rules/rationalizations.yaml); dismiss with "verify" or None."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Back to the question")]

    def __init__(self, rationalization: dict, probe_title: str | None) -> None:
        super().__init__()
        self.row, self.probe_title = rationalization, probe_title

    def compose(self) -> ComposeResult:
        """Excuse, reality, approach, and the choices."""
        row = self.row
        with Vertical(classes="dialog counter-dialog"):
            yield Label(Text(f"“{row['excuse']}”"), classes="dialog-title")
            yield Static(Text.assemble(("Reality. ", "bold"), row["reality"]), classes="dialog-text")
            yield Static(Text.assemble(("Instead. ", "bold"), row["approach"]), classes="dialog-text")
            options = []
            if self.probe_title:
                options.append(Option(f"Verify it now: run “{self.probe_title}”", id="verify"))
            options.append(Option("Back to the question", id="back"))
            yield OptionList(*options, id="dialog-choices")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Dismiss with the choice."""
        self.dismiss("verify" if event.option.id == "verify" else None)
