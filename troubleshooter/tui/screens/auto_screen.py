"""Run all checks (the ``--auto`` path) with live progress, then go to the diagnosis."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, RichLog, Static

from troubleshooter.tui.messages import InvestigationChanged


class AutoScreen(Screen):
    """Starts every default probe on mount; a log line per event."""

    BINDINGS = [
        Binding("d", "diagnosis", "Diagnosis"),
        Binding("escape", "cancel_or_back", "Cancel/Back"),
        Binding("q", "app.request_quit", "Quit", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(id="auto")

    def compose(self) -> ComposeResult:
        """Status line and the progress log."""
        yield Header()
        yield Static("Running every default check…", id="auto-status")
        yield RichLog(id="auto-log", wrap=True, markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Start the run."""
        self.title = "All checks"
        if not self.app.start_probes([], "auto"):
            self.query_one("#auto-status", Static).update("Other probes are running; try again when they finish.")

    def show_progress(self, text: str) -> None:
        """One progress line."""
        self.query_one("#auto-log", RichLog).write(text)

    def on_investigation_changed(self, _: InvestigationChanged) -> None:
        """When the run is over, summarise."""
        if self.app.probes_running:
            return
        inv = self.app.investigation
        findings = inv.session().findings()
        bad = sum(1 for f in findings if f.severity in ("error", "warning"))
        self.query_one("#auto-status", Static).update(
            f"Done: {len(inv.results)} probe result(s), {len(findings)} finding(s) ({bad} error/warning). "
            "Press d for the diagnosis.")

    def action_diagnosis(self) -> None:
        """Open the diagnosis."""
        from troubleshooter.tui.screens.diagnosis_screen import DiagnosisScreen

        self.app.push_screen(DiagnosisScreen())

    def action_cancel_or_back(self) -> None:
        """Esc cancels a running check, else goes back."""
        if not self.app.cancel_probes():
            self.app.pop_screen()
