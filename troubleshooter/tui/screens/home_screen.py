"""The first screen: what was detected at a glance, the symptoms (decision trees), and the other ways in."""

from __future__ import annotations

import os

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, OptionList, Static
from textual.widgets.option_list import Option

from troubleshooter.tui import environment
from troubleshooter.tui.messages import InvestigationChanged

ACTIONS = (
    ("action:auto", "Run all checks", "every default probe, no questions, live progress"),
    ("action:analyse", "Analyse a log or a script", "a failed run's logs, your training script (never run)"),
    ("action:red-flags", "Red-flag checklist", "ticked from the evidence where it can be"),
    ("action:diagnosis", "Diagnosis so far", "findings, evidence, fix; export"),
)


class HomeScreen(Screen):
    """Pick a symptom, or run all checks, or analyse files."""

    BINDINGS = [
        Binding("a", "pick('action:auto')", "All checks"),
        Binding("l", "pick('action:analyse')", "Analyse"),
        Binding("r", "pick('action:red-flags')", "Red flags"),
        Binding("d", "pick('action:diagnosis')", "Diagnosis"),
        Binding("q", "app.request_quit", "Quit", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(id="home")
        self.gpu_text = "detecting…"
        self.launcher_info: dict[str, str] | None = None  # read after the first paint (the launcher table is YAML)
        self.details: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        """Header, environment line, the menu, footer."""
        yield Header()
        yield Static(self._env_text(), id="env-summary")
        yield Label("What is going wrong? Pick the symptom closest to yours:", classes="prompt")
        yield OptionList(Option("loading the knowledge base…", id="loading", disabled=True), id="menu")
        yield Static(id="menu-detail")
        yield Footer()

    def on_mount(self) -> None:
        """Detect GPUs without blocking the first paint."""
        self.call_after_refresh(self.detect_gpus)
        self._fill()

    @work(thread=True, exit_on_error=False, group="env", description="detecting GPUs")
    def detect_gpus(self) -> None:
        """The launcher table and ``nvidia-smi -L`` in a thread (bounded by its own timeout), after the first paint."""
        options = self.app.options
        launcher = environment.launcher_summary(os.environ, options.nproc, options.backend)
        self.app.call_from_thread(self._set_env, launcher, self.gpu_text)
        self.app.call_from_thread(self._set_env, launcher, self.app.detect_gpus())

    def _set_env(self, launcher: dict[str, str], gpus: str) -> None:
        self.launcher_info, self.gpu_text = launcher, gpus
        self.query_one("#env-summary", Static).update(self._env_text())

    def _env_text(self) -> Text:
        info = dict(self.launcher_info or {"launcher": "…"})
        info["GPUs"] = self.gpu_text
        text = Text()
        for i, (key, value) in enumerate(info.items()):
            text.append(f"{key}: ", style="dim")
            text.append(value, style="bold")
            text.append("   " if i % 2 == 0 and i < len(info) - 1 else "\n")
        return text.rstrip() or text

    def on_investigation_changed(self, _: InvestigationChanged) -> None:
        """Rules may have just loaded; the diagnosis entry shows how much evidence there is."""
        self._fill()

    def _fill(self) -> None:
        rules = self.app.rules
        inv = self.app.investigation
        if rules is None or inv is None:
            return
        menu = self.query_one("#menu", OptionList)
        highlighted = menu.highlighted
        menu.clear_options()
        trees = sorted(rules.trees.values(), key=lambda t: (t.get("order", 100), t["title"]))
        self.details = {}
        for tree in trees:
            menu.add_option(Option(Text(tree["title"], style="bold"), id=f"tree:{tree['id']}"))
            self.details[f"tree:{tree['id']}"] = tree["symptom"]
        if not trees:
            menu.add_option(Option("(no decision trees in rules/trees/)", id="none", disabled=True))
        menu.add_option(None)
        for key, title, hint in ACTIONS:
            if key == "action:diagnosis" and inv.has_evidence:
                hint = f"{len(inv.results)} probe result(s), {len(inv.answers)} answer(s)"
            menu.add_option(Option(Text("▸ " + title), id=key))
            self.details[key] = hint
        menu.highlighted = highlighted if highlighted is not None else 0
        menu.focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Describe the highlighted symptom or action under the menu."""
        detail = self.details.get(event.option.id or "", "")
        self.query_one("#menu-detail", Static).update(Text(detail, style="italic"))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Open what was picked."""
        self.action_pick(event.option.id)

    def action_pick(self, key: str) -> None:
        """Go to a tree walk or one of the actions."""
        if self.app.investigation is None:
            self.app.notify("Still loading the knowledge base…")
            return
        from troubleshooter.tui.screens.analyse_modal import AnalyseModal
        from troubleshooter.tui.screens.auto_screen import AutoScreen
        from troubleshooter.tui.screens.checklist_screen import ChecklistScreen
        from troubleshooter.tui.screens.diagnosis_screen import DiagnosisScreen
        from troubleshooter.tui.screens.walk_screen import WalkScreen

        if key.startswith("tree:"):
            self.app.investigation.start_tree(key[5:])
            self.app.changed()
            self.app.push_screen(WalkScreen())
        elif key == "action:auto":
            self.app.push_screen(AutoScreen())
        elif key == "action:analyse":
            self.app.push_screen(AnalyseModal(), lambda paths: paths and self.app.analyse(paths))
        elif key == "action:red-flags":
            self.app.push_screen(ChecklistScreen())
        elif key == "action:diagnosis":
            self.app.push_screen(DiagnosisScreen())
