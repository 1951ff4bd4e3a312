"""Progress of a run as a stream of ``RunEvent``s; callers render them (terminal lines, TUI widgets)."""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from troubleshooter.core.probe import ProbeResult


@dataclass(frozen=True)
class RunEvent:
    """One step of a run: a ``note`` (text), a probe ``result``, or a raw ``rank`` worker event."""

    kind: str
    text: str = ""
    result: ProbeResult | None = None
    rank: int | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str | None:
        """The one-line description of a note or result (None for rank events; see :func:`rank_line`)."""
        if self.kind == "note":
            return self.text
        if self.kind == "result" and self.result is not None:
            r = self.result
            rank = f" rank {r.rank}" if r.rank is not None else ""
            return (f"{r.probe}{rank}: {r.status} ({r.duration_s * 1000:.0f} ms)"
                    + (f" {r.message}" if r.status != "ok" and r.message else ""))
        return None

    def rank_line(self) -> str | None:
        """A status line for a rank worker event (None for events not worth showing)."""
        kind, rank, event = self.data.get("event"), self.rank, self.data
        if self.kind != "rank":
            return self.line()
        if kind == "init-start":
            return f"rank {rank}: joining the process group (init_process_group)"
        if kind == "init-done":
            return f"rank {rank}: joined ({event.get('backend')}) in {float(event.get('seconds') or 0):.2f} s"
        if kind == "probe-start":
            return f"rank {rank}: {event.get('probe')} started"
        if kind == "phase":
            return f"rank {rank}: {event.get('phase')}"
        if kind == "error":
            return f"rank {rank}: error: {event.get('message')}"
        return None


Listener = Callable[[RunEvent], None]


def ignore(event: RunEvent) -> None:
    """A listener that drops every event."""


def terminal_lines(enabled: bool) -> Listener:
    """A listener printing notes and results as indented lines on stderr (nothing when not ``enabled``)."""
    lock = threading.Lock()

    def listen(event: RunEvent) -> None:
        text = event.line()
        if enabled and text:
            with lock:
                print(f"  {text}", file=sys.stderr, flush=True)
    return listen
