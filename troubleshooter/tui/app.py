"""The Textual application: owns the investigation, runs probes in workers, saves the recovery file.

Screens re-render from ``app.investigation`` (attributes down); workers only post messages
(messages up). The knowledge base and probe registry are constructor arguments so tests can
inject fakes; when absent they are loaded in a worker after the first paint.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Iterable

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.worker import Worker, WorkerState, get_current_worker

from troubleshooter.tui import environment, recovery
from troubleshooter.tui.messages import (AnalysisFinished, InvestigationChanged, ProbeFinished, ProbeProgress,
                                         ProbeStarted)
from troubleshooter.tui.screens.home_screen import HomeScreen

DARK, LIGHT = "textual-dark", "textual-light"


class TroubleshooterApp(App[int]):
    """The interactive troubleshooter: symptom → decision tree → probes → diagnosis → report."""

    CSS_PATH = str(Path(__file__).with_name("app.tcss"))
    TITLE = "DDP troubleshooter"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False),
        Binding("ctrl+q", "request_quit", "Quit", priority=True),
    ]

    def __init__(self, rules: Any = None, registry: Any = None, options: Any = None,
                 state_file: Path | None = None, offer_resume: bool = True,
                 detect_gpus: Callable[[], str] | None = None) -> None:
        super().__init__()
        from troubleshooter.run.options import RunOptions

        self.rules = rules
        self.registry = registry
        self.options: RunOptions = options or RunOptions()
        self.state_file = state_file or recovery.recovery_path()
        self.offer_resume = offer_resume
        self.detect_gpus = detect_gpus or environment.gpus
        self.investigation: Any = None
        self.probe_status = ""
        self.probes_running: list[str] = []
        self._cancel_probes = threading.Event()
        self.fatal_message = ""

    # ---- start-up ------------------------------------------------------------------------------

    def on_mount(self) -> None:
        """Paint the home screen at once; load rules and probes behind it if they were not given."""
        self.push_screen(HomeScreen())
        if self.rules is None or self.registry is None:
            self.call_after_refresh(self.load_knowledge)  # after the first paint: parsing competes for the GIL
        else:
            self._knowledge_ready()

    @work(thread=True, exit_on_error=False, group="load", description="loading rules and probes")
    def load_knowledge(self) -> None:
        """Load rules/ and the probe registry (YAML parsing, plugin import) off the UI thread."""
        from troubleshooter.core.registry import Registry
        from troubleshooter.core.ruleset import load_rules

        rules = self.rules or load_rules(list(self.options.rules_dirs))
        registry = self.registry or Registry.load(list(self.options.probe_dirs))
        self.call_from_thread(self._set_knowledge, rules, registry)

    def _set_knowledge(self, rules: Any, registry: Any) -> None:
        self.rules, self.registry = rules, registry
        self._knowledge_ready()

    def _knowledge_ready(self) -> None:
        from troubleshooter.tui.model import Investigation
        from troubleshooter.tui.screens.choice_modal import ChoiceModal

        self.investigation = Investigation(self.rules)
        saved = recovery.load(self.state_file) if self.offer_resume else None
        if saved and (saved.get("answers") or saved.get("results") or saved.get("static_facts")):
            where = f"decision tree '{saved.get('tree')}', " if saved.get("tree") else ""
            text = (f"A previous session was not finished ({where}{len(saved.get('answers') or {})} answer(s), "
                    f"{len(saved.get('results') or [])} probe result(s)).\nIt was saved to {self.state_file}.")
            self.push_screen(ChoiceModal("Resume the previous session?", text,
                                         [("resume", "Resume it"), ("fresh", "Start fresh (discard it)")]),
                             lambda choice: self._resume(saved, choice))
        self.refresh_views()

    def _resume(self, saved: dict, choice: str | None) -> None:
        from troubleshooter.tui.model import Investigation
        from troubleshooter.tui.screens.walk_screen import WalkScreen

        if choice != "resume":
            recovery.clear(self.state_file)
            return
        try:
            self.investigation = Investigation.from_dict(self.rules, saved)
        except (ValueError, KeyError, TypeError) as exc:
            self.notify(f"Could not resume: {exc}", severity="error", markup=False)
            return
        self.refresh_views()
        if self.investigation.tree_id:
            self.push_screen(WalkScreen())

    # ---- state ---------------------------------------------------------------------------------

    def save_state(self) -> None:
        """Write the recovery file (called after every answer, result, tick)."""
        try:
            recovery.save(self.investigation.to_dict(), self.state_file)
        except OSError as exc:
            self.notify(f"Could not save the session to {self.state_file}: {exc.strerror}", severity="warning",
                        markup=False)

    def changed(self) -> None:
        """The investigation changed: save it and let every screen re-render."""
        self.save_state()
        self.refresh_views()

    def refresh_views(self) -> None:
        """Ask every screen on the stack to re-render from the investigation."""
        for screen in self.screen_stack:
            screen.post_message(InvestigationChanged())

    # ---- probes --------------------------------------------------------------------------------

    def start_probes(self, probe_ids: Iterable[str], purpose: str) -> bool:
        """Run probes (purpose "walk", "verify" or "auto") in a worker; False when some are already running."""
        if self.probes_running:
            self.notify(f"Still running: {', '.join(self.probes_running)} (press Esc to cancel it)", severity="warning")
            return False
        ids = list(probe_ids)
        missing = [p for p in ids if p not in self.registry.probes]
        if missing:
            self.notify(f"Probe(s) not available here: {', '.join(missing)}", severity="error")
            return False
        self.probes_running = ids or ["all checks"]
        self.probe_status = "starting…"
        self.post_message(ProbeStarted(ids, purpose))
        self._cancel_probes = threading.Event()
        self._probe_worker(ids, purpose, dict(self.investigation.facts()), self._cancel_probes)
        return True

    @work(thread=True, exit_on_error=False, group="probes", description="probes")
    def _probe_worker(self, probe_ids: list[str], purpose: str, facts: dict, cancel: threading.Event) -> None:
        from troubleshooter.run.events import RunEvent
        from troubleshooter.run.plan import run_probes
        from troubleshooter.run.session import Session

        worker = get_current_worker()
        auto = purpose == "auto"

        def show(event: RunEvent) -> None:  # --auto shows the CLI's lines; a probe run every rank's steps too
            text = event.line() if auto else event.rank_line()
            if text and not worker.is_cancelled:
                self.post_message(ProbeProgress(text))

        run = Session(self.rules, "tui")
        facts = {k: v for k, v in facts.items() if not k.startswith(("answer.", "walk."))}
        run_probes(run, self.registry, self.options, show, cancel, None if auto else probe_ids, None if auto else facts)
        if not worker.is_cancelled:
            self.post_message(ProbeFinished(probe_ids, purpose, run))

    def cancel_probes(self) -> bool:
        """Cancel the running probes: their process groups are killed at once."""
        if not self.probes_running:
            return False
        self._cancel_probes.set()
        self.workers.cancel_group(self, "probes")
        self.notify(f"Cancelled {', '.join(self.probes_running)}; its results will be ignored.")
        self.probes_running = []
        self.probe_status = "cancelled"
        self.refresh_views()
        return True

    def on_probe_progress(self, message: ProbeProgress) -> None:
        """Keep the newest status line and show it on the screens that care."""
        if self.probes_running:
            self.probe_status = message.text
            for screen in self.screen_stack:
                if hasattr(screen, "show_progress"):
                    screen.show_progress(message.text)

    def on_probe_finished(self, message: ProbeFinished) -> None:
        """Record the results, save, re-render."""
        self.probes_running = []
        self.probe_status = ""
        self.investigation.add_results(message.run.results, message.run.run_facts, message.run.world)
        bad = [r for r in message.run.results if r.status not in ("ok", "skipped")]
        if bad:
            self.notify("; ".join(f"{r.probe}: {r.status} {r.message}"[:120] for r in bad[:3]), severity="warning",
                        title="Some probes did not complete", markup=False)
        self.changed()

    def export(self, path: str) -> str:
        """Write the report (mode ``tui``, with the walk) to ``path``; returns the format used."""
        from troubleshooter.report.document import emit

        return emit(self.investigation.report(), None, path)

    # ---- files ---------------------------------------------------------------------------------

    @work(thread=True, exit_on_error=False, group="analysis", description="analysing files")
    def analyse(self, paths: list[str]) -> None:
        """Scan scripts / analyse logs in a worker."""
        from troubleshooter.run.plan import analyze_files

        try:
            facts, error = analyze_files(paths, self.rules), ""
        except FileNotFoundError as exc:
            facts, error = {}, str(exc)
        except ImportError as exc:
            facts, error = {}, f"that analyser is not part of this build ({exc})"
        self.post_message(AnalysisFinished(paths, facts, error))

    def on_analysis_finished(self, message: AnalysisFinished) -> None:
        """Record analysed facts."""
        if message.error:
            self.notify(message.error, severity="error", title="Could not analyse", markup=False)
            return
        for source, facts in message.facts.items():
            self.investigation.add_static(source, facts, message.paths)
        hits = sum(len(v) for f in message.facts.values() for k, v in f.items() if isinstance(v, list))
        self.notify(f"Analysed {len(message.paths)} file(s): {hits} hit(s). See the diagnosis (d).")
        self.changed()

    # ---- errors, help, theme, quit --------------------------------------------------------------

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        from troubleshooter.tui.screens.error_modal import ErrorModal

        error = event.worker.error
        if event.worker.group == "load":
            self.fatal_message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
            self.exit(2)
            return
        if event.worker.group == "probes":
            self.probes_running, self.probe_status = [], ""
            self.refresh_views()
        self.push_screen(ErrorModal(event.worker.description, error))

    def action_help(self) -> None:
        """Show the help screen."""
        from troubleshooter.tui.screens.help_modal import HelpModal

        if not isinstance(self.screen, HelpModal):
            self.push_screen(HelpModal())

    def action_toggle_theme(self) -> None:
        """Switch between the dark and the light theme."""
        self.theme = LIGHT if self.theme == DARK else DARK

    def action_request_quit(self) -> None:
        """Quit; with evidence gathered, offer to export first (the recovery file keeps it either way)."""
        from troubleshooter.tui.screens.choice_modal import ChoiceModal

        if self.investigation is None or not self.investigation.has_evidence:
            self.exit(0)
            return
        self.save_state()
        text = f"Your answers and results are saved in {self.state_file}; you can resume next time."
        self.push_screen(ChoiceModal("Quit the troubleshooter?", text, [
            ("export", "Export a report, then quit"), ("quit", "Quit now"), ("stay", "Keep going")]), self._quit_choice)

    def _quit_choice(self, choice: str | None) -> None:
        from troubleshooter.tui.screens.export_modal import ExportModal

        if choice == "quit":
            self.exit(0)
        elif choice == "export":
            def exported(path: str | None) -> None:
                if path:
                    recovery.clear(self.state_file)
                    self.exit(0)
            self.push_screen(ExportModal(), exported)
