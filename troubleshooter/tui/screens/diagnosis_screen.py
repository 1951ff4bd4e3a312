"""The diagnosis: findings root cause first with evidence and the fix; export; verify gated findings."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Markdown, Static

from troubleshooter.report.figures import step_figure
from troubleshooter.tui.messages import InvestigationChanged
from troubleshooter.tui.widgets.finding_view import diagnosis_markdown
from troubleshooter.tui.widgets.step_chart import StepChart


class DiagnosisScreen(Screen):
    """Re-rendered from the investigation's report document (the same one export writes)."""

    BINDINGS = [
        Binding("e", "export", "Export"),
        Binding("v", "verify", "Verify gated"),
        Binding("escape,b", "app.pop_screen", "Back"),
        Binding("q", "app.request_quit", "Quit", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(id="diagnosis")
        self.doc: dict = {}

    def compose(self) -> ComposeResult:
        """Summary line, the step-time chart (once a train step was measured) and the findings."""
        yield Header()
        yield Static(id="summary")
        yield StepChart(id="step-chart")
        with VerticalScroll(id="findings-scroll"):
            yield Markdown(id="findings")
        yield Footer()

    def on_mount(self) -> None:
        """Render."""
        self.title = "Diagnosis"
        self.render_doc()

    def on_investigation_changed(self, _: InvestigationChanged) -> None:
        """New evidence: re-render."""
        self.render_doc()

    def show_progress(self, text: str) -> None:
        """Live status of a verification probe."""
        self.query_one("#summary", Static).update(Text(f"⧗ {text}"))  # probe progress carries user values: no Rich markup

    def render_doc(self) -> None:
        """Build the report document and show it."""
        self.doc = self.app.investigation.report()
        counts = self.doc["summary"]
        summary = (f"{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} note(s), "
                   "root cause first")
        self.query_one("#summary", Static).update(summary)
        self.query_one(StepChart).show(step_figure(self.doc))
        self.query_one("#findings", Markdown).update(diagnosis_markdown(self.doc))

    def action_export(self) -> None:
        """Export to md/html/json."""
        from troubleshooter.tui.screens.export_modal import ExportModal

        self.app.push_screen(ExportModal())

    def action_verify(self) -> None:
        """Run the probes that gated findings wait for (their gate names them)."""
        rules = self.app.rules
        probes = []
        for finding in self.doc.get("findings", []):
            gate = rules.findings.get(finding["id"], {}).get("gate") or {}
            if finding.get("gate_unmet") and gate.get("probe") and gate["probe"] not in probes:
                probes.append(gate["probe"])
        if not probes:
            self.app.notify("No finding is waiting for a measurement.")
        elif self.app.start_probes(probes, "verify"):
            self.show_progress(f"running {', '.join(probes)}…")
