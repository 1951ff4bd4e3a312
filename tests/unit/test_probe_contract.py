"""The probe contract: declared, typed facts only; crashes contained; plugins discovered by path."""

from __future__ import annotations

from pathlib import Path

import pytest

from troubleshooter.core.errors import UsageError
from troubleshooter.core.facts import FactSpec
from troubleshooter.core.probe import NODE, Probe, ProbeContext, run_probe
from troubleshooter.core.registry import Registry, probes_in_dir


class Sloppy(Probe):
    """Returns an undeclared fact and a mistyped one."""
    id = "sloppy"
    produces = (FactSpec("s.count", "int", "a count"), FactSpec("s.ok", "bool", "a flag"))

    def run(self, ctx: ProbeContext):
        return self.result({"s.count": True, "s.ok": True, "s.extra": 1})


def test_undeclared_and_mistyped_facts_are_dropped_and_recorded() -> None:
    result = run_probe(Sloppy(), ProbeContext(env={}))
    assert result.facts == {"s.ok": True}
    assert result.details["contract_violations"] == ["fact 's.count' should be int, got bool", "undeclared fact 's.extra'"]


def test_factspec_rejects_unknown_types() -> None:
    with pytest.raises(ValueError):
        FactSpec("x", "number", "doc")


def test_plugin_dir_discovery_and_override(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(
        "from troubleshooter.core.probe import Probe\n"
        "class Network(Probe):\n    '''Override.'''\n    id = 'network'; title = 'Mine'\n")
    (tmp_path / "_private.py").write_text("raise SystemExit('must not be imported')\n")
    [probe] = probes_in_dir(tmp_path)
    assert probe.title == "Mine"
    registry = Registry.load([tmp_path], entry_points=False)
    assert registry.get("network").title == "Mine"


def test_broken_plugin_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import nonexistent_module_xyz\n")
    with pytest.raises(UsageError, match="broken.py: the probe module failed to load: ModuleNotFoundError"):
        probes_in_dir(tmp_path)


def test_select_orders_and_validates() -> None:
    registry = Registry([type("B", (Probe,), {"id": "b", "order": 2, "scope": NODE, "__doc__": "b"}),
                         type("A", (Probe,), {"id": "a", "order": 1, "scope": NODE, "__doc__": "a"}),
                         type("C", (Probe,), {"id": "c", "default": False, "scope": NODE, "__doc__": "c"})])
    assert [p.id for p in registry.select()] == ["a", "b"]
    assert [p.id for p in registry.select(["c", "a"])] == ["a", "c"]
    assert [p.id for p in registry.select(skip=["a"])] == ["b"]
    with pytest.raises(UsageError, match="unknown probe 'z'"):
        registry.select(["z"])
