"""The probe plugin contract: probes measure, they never decide.

A probe is a class in a module under ``probes/`` (or a ``--probes DIR``, or an
entry point in the group ``troubleshooter.probes``). Its declarations are class
data; ``run`` returns a :class:`ProbeResult` whose facts must all be declared in
``produces`` with the right type. Heavy imports (torch) go inside ``run``.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

from troubleshooter.core.facts import FactSpec, Facts

NODE = "node"  # once per machine, needs no process group
RANK = "rank"  # once per rank process, no collectives
WORLD = "world"  # in every rank with an initialized process group



@dataclass
class ProbeResult:
    """What one probe observed on one rank (or node)."""

    probe: str
    status: str = "ok"
    facts: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    rank: int | None = None
    host: str = ""
    duration_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``probes`` entries of the report, before status grading)."""
        return {
            "name": self.probe, "status": self.status, "rank": self.rank, "host": self.host,
            "duration_s": round(self.duration_s, 4), "facts": self.facts,
            "message": self.message, "details": self.details,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ProbeResult":
        """Inverse of :meth:`to_dict`."""
        return cls(
            probe=data["name"], status=data.get("status", "ok"), facts=dict(data.get("facts") or {}),
            message=data.get("message", ""), details=dict(data.get("details") or {}),
            rank=data.get("rank"), host=data.get("host", ""), duration_s=float(data.get("duration_s") or 0.0),
        )


@dataclass
class ProbeContext:
    """Everything a probe may read: the environment, options, its rank, earlier facts."""

    env: Mapping[str, str]
    options: Mapping[str, Any] = field(default_factory=dict)
    facts: Facts = field(default_factory=Facts)
    rank: int | None = None
    local_rank: int | None = None
    world_size: int | None = None
    backend: str | None = None
    device: str | None = None
    timeout_s: float = 30.0
    cancelled: threading.Event = field(default_factory=threading.Event)
    on_phase: Callable[[str], None] | None = None

    def phase(self, name: str) -> None:
        """Announce the phase the probe is entering (shown live; names where a hang happened)."""
        if self.on_phase is not None:
            self.on_phase(name)

    def check_cancelled(self) -> None:
        """Raise :class:`ProbeCancelled` if the run was cancelled (call between phases)."""
        if self.cancelled.is_set():
            raise ProbeCancelled()


class ProbeCancelled(Exception):
    """Raised inside a probe when the user or the runner cancelled it."""


class Probe:
    """Base class of every probe plugin."""

    id: ClassVar[str] = ""
    title: ClassVar[str] = ""
    scope: ClassVar[str] = NODE
    needs: ClassVar[tuple[str, ...]] = ()  # "torch", "cuda", "process_group", or fact keys
    produces: ClassVar[tuple[FactSpec, ...]] = ()
    timeout_s: ClassVar[float] = 10.0
    default: ClassVar[bool] = True  # part of ``troubleshoot --auto`` unless asked otherwise
    default_with: ClassVar[tuple[str, ...]] = ()  # options that, when given, make a non-default probe default
    order: ClassVar[int] = 100  # lower runs first within its scope

    def run(self, ctx: ProbeContext) -> ProbeResult:  # pragma: no cover - interface
        """Measure and return facts. Must not decide anything."""
        raise NotImplementedError

    def result(self, facts: dict[str, Any] | None = None, message: str = "", **details: Any) -> ProbeResult:
        """A successful result carrying ``facts``."""
        return ProbeResult(self.id, "ok", dict(facts or {}), message, dict(details))

    def skip(self, reason: str) -> ProbeResult:
        """A result saying the probe does not apply here (not a failure)."""
        return ProbeResult(self.id, "skipped", {}, reason)

    @classmethod
    def spec(cls, key: str) -> FactSpec | None:
        """The declaration of fact ``key``, if this probe produces it."""
        return next((s for s in cls.produces if s.key == key), None)


def validate_facts(probe: type[Probe], facts: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Keep only declared, well-typed facts; return them and a list of complaints."""
    kept: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in facts.items():
        spec = probe.spec(key)
        if spec is None:
            problems.append(f"undeclared fact {key!r}")
        elif value is None:
            continue
        elif not spec.accepts(value):
            problems.append(f"fact {key!r} should be {spec.type}, got {type(value).__name__}")
        else:
            kept[key] = value
    return kept, problems


def run_probe(probe: Probe, ctx: ProbeContext) -> ProbeResult:
    """Run one probe in this process: time it, validate its facts, turn a crash into status ``error``."""
    started = time.perf_counter()
    try:
        result = probe.run(ctx)
    except ProbeCancelled:
        result = ProbeResult(probe.id, "skipped", message="cancelled")
    except Exception as exc:  # a probe crash must never stop the others
        result = ProbeResult(probe.id, "error", message=f"probe did not complete: {type(exc).__name__}: {exc}")
    result.probe = probe.id
    result.duration_s = time.perf_counter() - started
    result.rank = ctx.rank if result.rank is None else result.rank
    result.host = result.host or socket.gethostname()
    kept, problems = validate_facts(type(probe), result.facts)
    result.facts = kept
    if problems:
        result.details.setdefault("contract_violations", problems)
    return result
