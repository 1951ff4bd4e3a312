"""The red-flag checklist: items decided by the evidence are ticked automatically, the rest by the user."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from troubleshooter.tui.messages import InvestigationChanged

MARKS = {"flagged": ("✗", "bold red"), "cleared": ("✓", "green"), "ticked": ("☑", "cyan"), "open": ("☐", "")}


class ChecklistScreen(Screen):
    """One line per item; Space/Enter ticks a manual item; the highlighted item is explained below."""

    BINDINGS = [
        Binding("space", "tick", "Tick"),
        Binding("escape,b", "app.pop_screen", "Back"),
        Binding("q", "app.request_quit", "Quit", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(id="red-flags")
        self.rows: list = []

    def compose(self) -> ComposeResult:
        """Legend, items, detail."""
        yield Header()
        yield Static("✗ red flag found in the evidence   ✓ cleared by the evidence   ☑/☐ check it yourself",
                     id="legend")
        with Vertical(id="checklist-body"):
            yield OptionList(id="items")
            yield Static(id="item-detail")
        yield Footer()

    def on_mount(self) -> None:
        """Render."""
        self.title = "Red-flag checklist"
        self.render_items()

    def on_investigation_changed(self, _: InvestigationChanged) -> None:
        """Evidence changed: items may flip."""
        self.render_items()

    def render_items(self) -> None:
        """Evaluate every item against the facts and list them."""
        self.rows = self.app.investigation.checklist()
        items = self.query_one("#items", OptionList)
        keep = items.highlighted
        items.clear_options()
        group = None
        for i, row in enumerate(self.rows):
            if row.group != group:
                group = row.group
                items.add_option(Option(Text(group, style="bold underline"), disabled=True))
            mark, style = MARKS[row.status]
            label = Text.assemble((f"{mark} ", style), row.item.get("wrong") or row.item.get("step") or row.item["id"],
                                  (" (from the evidence)" if row.auto else "", "dim"))
            items.add_option(Option(label, id=str(i)))
        if not self.rows:
            items.add_option(Option("No red-flag checklist in rules/checklists/.", disabled=True))
        items.highlighted = keep if keep is not None else (1 if self.rows else None)
        items.focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Explain the highlighted item."""
        if event.option.id is None:
            return
        item = self.rows[int(event.option.id)].item
        text = Text()
        for key, label in (("right", "Right: "), ("why", "Why: "), ("step", "Check: ")):
            if item.get(key):
                text.append(label, style="bold")
                text.append(f"{item[key]}\n")
        for cmd in item.get("commands") or []:
            text.append(f"$ {cmd}\n", style="cyan")
        self.query_one("#item-detail", Static).update(text)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter ticks too."""
        self.action_tick()

    def action_tick(self) -> None:
        """Tick or untick the highlighted manual item."""
        items = self.query_one("#items", OptionList)
        if items.highlighted is None:
            return
        option = items.get_option_at_index(items.highlighted)
        if option.id is None:
            return
        row = self.rows[int(option.id)]
        if row.auto:
            self.app.notify("The evidence decides this item.")
            return
        self.app.investigation.toggle_tick(row.checklist, row.item["id"])
        self.app.changed()
