"""The evidence gathered so far: probe runs with their status, the facts they measured, the answers given
(secrets masked as in the reports)."""

from __future__ import annotations

from typing import Any, Mapping

from rich.text import Text
from textual.widgets import Static

from troubleshooter.core.values import fact_lines
from troubleshooter.report.figures import step_figure
from troubleshooter.report.redact import redact, redact_text
from troubleshooter.report.render import STATUS_ICONS
from troubleshooter.tui.widgets.step_chart import step_text

MAX_VALUE = 40
MAX_FACTS = 4  # per probe; the rest is in the exported report
MAX_ROWS = 6  # of a mapping fact's table
CHART_WIDTH = 34


def _short(text: str) -> str:
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


class EvidencePanel(Static):
    """A side panel re-rendered from the investigation."""

    def show(self, results: list, facts: Mapping[str, Any], answers: Mapping[str, str], analysed: list[str]) -> None:
        """Render the answers given, each probe run (its summary and first facts) and the analysed files."""
        text = Text()
        text.append("Evidence\n", style="bold underline")
        if not (results or answers or analysed):
            text.append("nothing yet: answers and probe results appear here", style="dim")
        steps = step_figure({"probes": [r.to_dict() for r in results]})
        if steps:  # the picture first: the rest is the list it came from
            text.append_text(step_text(steps, CHART_WIDTH))
            text.append("\n\n")
        if answers:
            text.append("You said\n", style="bold")
            for node, label in answers.items():
                text.append(f"  {node}: ", style="dim")
                text.append(f"{label}\n")
        seen: set[str] = set()
        for result in results:
            label = result.probe + (f" r{result.rank}" if result.rank is not None else "")
            text.append(f"{STATUS_ICONS.get(result.status, '?')} {label}", style="bold")
            text.append(f" {result.status} {result.duration_s:.1f}s\n", style="dim")
            if result.message:
                text.append(f"  {_short(redact_text(result.message))}\n", style="italic")
            if result.probe in seen:
                continue
            seen.add(result.probe)
            keys = sorted(result.facts)
            for key in keys[:MAX_FACTS]:
                value = redact({key: facts.get(key, result.facts[key])})[key]
                first, *rest = fact_lines(key, value, limit=MAX_ROWS)
                name, sep, value = first.partition(" = ") if " = " in first else (first, "", "")
                text.append(f"  {name}{sep}", style="dim")
                text.append(_short(value) + "\n")
                for line in rest:  # a mapping: a small table
                    text.append(f"  {_short(line)}\n")
            if len(keys) > MAX_FACTS:
                text.append(f"  … {len(keys) - MAX_FACTS} more facts in the report\n", style="dim")
        if analysed:
            text.append("Files analysed\n", style="bold")
            for path in analysed:
                text.append(f"  {path}\n")
        self.update(text)
