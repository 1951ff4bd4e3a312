"""A small modal question with a few labelled choices (resume? quit? …); dismisses with the choice key."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option


class ChoiceModal(ModalScreen[str | None]):
    """Ask ``title``, explain with ``text``, offer ``choices`` as (key, label); Esc dismisses with None."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, text: str, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text, self.text, self.choices = title, text, choices

    def compose(self) -> ComposeResult:
        """A titled dialog with the explanation and the choices."""
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield Static(self.text, classes="dialog-text")
            yield OptionList(*[Option(label, id=key) for key, label in self.choices], id="dialog-choices")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Dismiss with the chosen key."""
        self.dismiss(event.option.id)
