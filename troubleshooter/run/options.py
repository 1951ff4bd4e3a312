"""``RunOptions``: what a run was asked to do, built once (the CLI from its command line, the TUI directly)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

from troubleshooter.core.errors import UsageError


@dataclass(frozen=True)
class RunOptions:
    """The options of ``--auto``, ``probe NAME``, the TUI and distributed mode (immutable: derive with ``with_``)."""

    only: tuple[str, ...] = ()  # run only these probes (--probe)
    skip: tuple[str, ...] = ()  # ... minus these (--skip)
    nproc: int = 2  # ranks of the local world when no launcher is around
    backend: str = "auto"  # auto | gloo | nccl
    timeout_s: float | None = None  # per-probe timeout overriding each probe's own
    model: str | None = None  # MODULE:CALLABLE returning the user's nn.Module
    data: str | None = None  # MODULE:CALLABLE returning a Dataset or batches
    scripts: tuple[str, ...] = ()  # scanned statically, never run
    logs: tuple[str, ...] = ()  # analysed as logs of a failed run
    grad_accum: int | None = None
    num_workers: int | None = None
    precision: str | None = None
    launcher: str | None = None  # the launcher the user's job uses (tools check)
    hostfile: str | None = None
    rules_dirs: tuple[str, ...] = ()  # --rules overlays
    probe_dirs: tuple[str, ...] = ()  # --probes plugin directories
    output: str | None = None  # where the report goes (distributed ranks write partial reports beside it)
    quiet: bool = False
    cwd: str = field(default_factory=os.getcwd)

    def with_(self, **changes: Any) -> "RunOptions":
        """A copy with ``changes`` applied."""
        return replace(self, **changes)

    def validate(self) -> None:
        """A UsageError for values no run can use (checked before any probe starts)."""
        from troubleshooter.run.user_code import HookError, check_spec

        if self.nproc < 1:
            raise UsageError(f"--nproc must be at least 1, got {self.nproc}")
        for flag, spec in (("--model", self.model), ("--data", self.data)):
            if spec:
                try:
                    check_spec(spec, self.cwd)
                except HookError as exc:
                    raise UsageError(f"{flag} {exc}") from None

    def probe_options(self) -> dict[str, Any]:
        """What probes read as ``ctx.options``."""
        return {"model": self.model, "data": self.data, "backend": self.backend, "nproc": self.nproc,
                "scripts": list(self.scripts), "logs": list(self.logs), "grad_accum": self.grad_accum,
                "num_workers": self.num_workers, "precision": self.precision, "launcher": self.launcher,
                "hostfile": self.hostfile, "cwd": self.cwd, "rules": list(self.rules_dirs)}

    def facts(self) -> dict[str, Any]:
        """``options.*`` facts: what the user told us about the job."""
        facts: dict[str, Any] = {}
        if self.backend != "auto":
            facts["options.backend"] = self.backend
        if self.grad_accum:
            facts["options.grad_accum_steps"] = self.grad_accum
        return facts
