"""The path walked so far, one line: node › node (answer) › … , newest at the right."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


ANSWER_WIDTH = 24


class Breadcrumb(Static):
    """Shows a walk's path; re-rendered by its screen."""

    def show(self, path: list[str], answers: dict[str, str]) -> None:
        """Render ``path`` (node ids) with the answers given on it."""
        text = Text("Path: ", style="bold")
        for i, node in enumerate(path):
            if i:
                text.append(" › ", style="dim")
            current = i == len(path) - 1
            text.append(node, style="reverse" if current else "")
            if node in answers:
                answer = answers[node] if len(answers[node]) <= ANSWER_WIDTH else answers[node][: ANSWER_WIDTH - 1] + "…"
                text.append(f" ({answer})", style="italic dim")
        self.update(text)
