"""Deterministic node probes for the TUI tests: they report what the environment tells them to."""

from __future__ import annotations

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.probe import NODE, Probe, ProbeContext, ProbeResult


class FakePortProbe(Probe):
    """Reports fake.port_open from TUI_FAKE_PORT_OPEN (1/0)."""

    id = "fake-port"
    title = "Fake port check"
    scope = NODE
    timeout_s = 20.0
    default = False
    produces = (FactSpec("fake.port_open", "bool", "The fake port is open"),)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        ctx.phase("connect")
        return self.result({"fake.port_open": ctx.env.get("TUI_FAKE_PORT_OPEN", "1") == "1"})


class FakeProfileProbe(Probe):
    """Reports trainstep.comm_exposed_fraction from TUI_FAKE_COMM (a float)."""

    id = "fake-profile"
    title = "Fake train-step profile"
    scope = NODE
    timeout_s = 20.0
    default = False
    produces = (FactSpec("trainstep.comm_exposed_fraction", "float", "Exposed communication share"),)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        return self.result({"trainstep.comm_exposed_fraction": float(ctx.env.get("TUI_FAKE_COMM", "0.8"))})
