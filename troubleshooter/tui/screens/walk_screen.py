"""The guided walk through one decision tree: one node at a time, probes run live, a breadcrumb and the evidence."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from troubleshooter.report.redact import redact_text
from troubleshooter.tui.messages import InvestigationChanged
from troubleshooter.tui.widgets.breadcrumb import Breadcrumb
from troubleshooter.tui.widgets.evidence_panel import EvidencePanel


class WalkScreen(Screen):
    """Ask / probe / conclude, driven by ``engine.walk`` over the investigation's facts."""

    BINDINGS = [
        Binding("b", "back", "Back"),
        Binding("f", "forward", "Forward", show=False),
        Binding("escape", "cancel_or_home", "Home"),
        Binding("s", "skip", "Skip?"),
        Binding("d", "diagnosis", "Diagnosis"),
        Binding("r", "red_flags", "Red flags"),
        Binding("v", "toggle_evidence", "Evidence", show=False),
        Binding("h", "home", "Home", show=False),
        Binding("q", "app.request_quit", "Quit", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(id="walk")
        self.cancelled_at: str | None = None  # the probe node whose automatic run the user cancelled
        self.state = None
        self.evidence_toggled = False  # once the user shows/hides the panel, width no longer decides

    def compose(self) -> ComposeResult:
        """Breadcrumb on top; the node on the left, the evidence on the right."""
        yield Header()
        yield Breadcrumb(id="breadcrumb")
        with Horizontal(id="walk-body"):
            with Vertical(id="node-pane"):
                with VerticalScroll(id="node-text"):
                    yield Static(id="question")
                    yield Static(id="why")
                    yield Static(id="status")
                yield OptionList(id="choices")
            with VerticalScroll(id="evidence-pane"):
                yield EvidencePanel(id="evidence")
        yield Footer()

    def on_investigation_changed(self, _: InvestigationChanged) -> None:
        """Answers or results changed: re-render (this may advance the walk)."""
        if self.is_current:
            self.render_node()

    def on_resize(self) -> None:
        """Narrow terminals (under 100 columns) hide the evidence panel until asked for (v)."""
        if not self.evidence_toggled:
            self.query_one("#evidence-pane").display = self.size.width >= 100

    def on_screen_resume(self) -> None:
        """Back from a dialog or another screen: the evidence may have changed."""
        self.render_node()

    def show_progress(self, text: str) -> None:
        """Live status of the running probe."""
        if self.app.probes_running:
            status = self.query_one("#status", Static)
            status.update(Text.assemble(("⧗ ", "bold"), text, ("   (Esc stops waiting)", "dim")))
            status.display = True

    # ---- rendering -------------------------------------------------------------------------------

    def render_node(self) -> None:
        """Show the node the walk stands at, with its choices."""
        app, inv = self.app, self.app.investigation
        state = self.state = inv.state()
        if state is None:
            return
        tree = inv.tree
        self.title = tree["title"]
        self.query_one(Breadcrumb).show(state.path, inv.path_answers(state))
        self.query_one(EvidencePanel).show(inv.results, inv.facts(), inv.path_answers(state), inv.analysed)
        node = state.node
        question, why, status, options = "", node.get("why", ""), "", []
        if state.kind == "ask":
            question = node["ask"]
            options = [Option(label, id=f"answer:{label}") for label in node["answers"]]
            for row in inv.counters(node):
                options.append(Option(Text(f"⚑ “{row['excuse']}”", style="italic"), id=f"counter:{row['id']}"))
        elif state.kind == "probe":
            titles = ", ".join(self._probe_title(p) for p in state.probes)
            question = f"Measuring: {titles}"
            why = why or node.get("probe_why", "")
            if app.probes_running:
                status = f"⧗ {app.probe_status or 'running…'}   (Esc cancels)"
            elif self.cancelled_at != state.node_id and app.start_probes(state.probes, "walk"):
                status = "⧗ starting…   (Esc cancels)"
            else:
                status = "Not run: the probe was cancelled."
                options = [Option(f"Run {titles} now", id="run"), Option("Go back", id="back")]
        elif state.kind == "conclude":
            question, why, status, options = self._conclusion(state)
        elif state.kind == "needs-evidence":
            titles = ", ".join(self._probe_title(p) for p in state.probes)
            question = "Not so fast: this needs evidence first."
            why = state.reason
            options = [Option(f"Run {titles} to verify (recommended)", id="run"),
                       Option("Go back and answer differently", id="back")]
        else:  # blocked
            question = "The evidence does not support concluding here."
            why = state.reason
            options = [Option("Go back and answer differently", id="back"),
                       Option("See the findings so far", id="diagnosis")]
        self.query_one("#question", Static).update(Text(question, style="bold"))
        self.query_one("#why", Static).update(Text.assemble(("Why this matters: ", "dim bold"), (why, "dim"))
                                             if why else "")
        self.query_one("#why", Static).display = bool(why)
        self.query_one("#status", Static).update(status)
        self.query_one("#status", Static).display = bool(status)
        choices = self.query_one("#choices", OptionList)
        choices.clear_options()
        choices.add_options(options)
        choices.display = bool(options)
        if options:
            choices.highlighted = 0
            choices.focus()

    def _probe_title(self, probe_id: str) -> str:
        cls = self.app.registry.probes.get(probe_id)
        return (cls.title or probe_id) if cls else f"{probe_id} (not installed)"

    def _conclusion(self, state) -> tuple[str, str, Text, list[Option]]:
        node = state.node
        findings = {f.id: f for f in self.app.investigation.session().findings()}
        lines = Text()
        if state.conclusions:
            question = "Diagnosis: " + "; ".join(
                redact_text(findings[c].title) if c in findings else c for c in state.conclusions)
        else:
            question = "No known cause matched on this path."
        for c in state.conclusions:
            if c in findings and findings[c].gate_unmet:
                lines.append(f"Not yet: {redact_text(findings[c].gate_unmet)}\n", style="bold")
        for step in node.get("next_steps") or []:
            lines.append(f"• {step}\n")
        options = [Option("See the diagnosis: evidence, fix, export", id="diagnosis"),
                   Option("Red-flag checklist", id="red-flags"), Option("Go back", id="back"),
                   Option("Back to the symptoms", id="home")]
        return question, node.get("summary", ""), lines, options

    # ---- input -----------------------------------------------------------------------------------

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Answer, run, or navigate."""
        key = event.option.id or ""
        inv, state = self.app.investigation, self.state
        if key.startswith("answer:"):
            inv.answer(state.node_id, key[7:])
            self.app.changed()
        elif key.startswith("counter:"):
            self._counter(inv.rules.rationalizations[key[8:]])
        elif key == "run":
            self.cancelled_at = None
            self.app.start_probes(state.probes, "walk")
            self.render_node()
        elif key == "back":
            self.action_back()
        elif key == "diagnosis":
            self.action_diagnosis()
        elif key == "red-flags":
            self.action_red_flags()
        elif key == "home":
            self.action_home()

    def _counter(self, row: dict) -> None:
        from troubleshooter.tui.screens.counter_modal import CounterModal

        probe = row.get("verify_probe")
        title = self._probe_title(probe) if probe and probe in self.app.registry.probes else None

        def done(choice: str | None) -> None:
            if choice == "verify" and probe:
                self.app.start_probes([probe], "verify")
                self.render_node()

        self.app.push_screen(CounterModal(row, title), done)

    def action_skip(self) -> None:
        """The user wants to skip this step: counter it, or explain why it matters."""
        state = self.state
        counters = self.app.investigation.counters(state.node) if state else []
        if counters:
            self._counter(counters[0])
        elif state is not None and state.kind in ("needs-evidence", "blocked"):
            self.app.notify(state.reason, title="This step cannot be skipped", severity="warning")
        else:
            self.app.notify("Answer the question (or go back with b): each step narrows the cause.",
                            title="Nothing to skip here")

    def action_back(self) -> None:
        """Undo the last answer."""
        if self.app.probes_running:
            self.app.cancel_probes()
        if self.app.investigation.back():
            self.cancelled_at = None
            self.app.changed()
        else:
            self.app.notify("This is the first question.")

    def action_forward(self) -> None:
        """Redo an answer undone with back."""
        if self.app.investigation.forward():
            self.app.changed()

    def action_cancel_or_home(self) -> None:
        """Esc: cancel the running probe, else go home."""
        if self.app.probes_running:
            self.cancelled_at = self.state.node_id if self.state else None
            self.app.cancel_probes()
        else:
            self.action_home()

    def action_home(self) -> None:
        """Back to the list of symptoms (the walk is kept)."""
        self.app.pop_screen()

    def action_diagnosis(self) -> None:
        """Findings so far."""
        from troubleshooter.tui.screens.diagnosis_screen import DiagnosisScreen

        self.app.push_screen(DiagnosisScreen())

    def action_red_flags(self) -> None:
        """The red-flag checklist."""
        from troubleshooter.tui.screens.checklist_screen import ChecklistScreen

        self.app.push_screen(ChecklistScreen())

    def action_toggle_evidence(self) -> None:
        """Show or hide the evidence panel."""
        pane = self.query_one("#evidence-pane")
        pane.display = not pane.display
        self.evidence_toggled = True
