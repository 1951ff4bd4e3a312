"""Discover probe plugins: the shipped ``probes/`` folder, ``--probes DIR`` folders and entry points.

Probe modules are loaded by file path (they are plugins, not part of the package);
loading one must not import torch (``troubleshoot --help``/``rules check`` stay fast).
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping

from troubleshooter.core.errors import UsageError
from troubleshooter.core.paths import probes_dir
from troubleshooter.core.probe import NODE, RANK, WORLD, Probe

ENTRY_POINT_GROUP = "troubleshooter.probes"


def _load_module(path: Path):
    name = f"troubleshooter_probes.{path.parent.name}.{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: not a loadable Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise UsageError(f"{path}: the probe module failed to load: {type(exc).__name__}: {exc}") from exc
    return module


def probes_in_dir(directory: Path) -> list[type[Probe]]:
    """All Probe subclasses defined in the ``*.py`` files of ``directory`` (sorted by file)."""
    if not directory.is_dir():
        raise UsageError(f"{directory}: probe directory does not exist")
    found: list[type[Probe]] = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        module = _load_module(path)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, Probe) and obj is not Probe and obj.__module__ == module.__name__ and obj.id:
                found.append(obj)
    return found


def _entry_point_probes() -> list[type[Probe]]:
    found = []
    for ep in metadata.entry_points().select(group=ENTRY_POINT_GROUP) if hasattr(metadata.entry_points(), "select") else []:
        obj = ep.load()
        if inspect.isclass(obj) and issubclass(obj, Probe):
            found.append(obj)
    return found


class Registry:
    """The probes available to this run, by id."""

    def __init__(self, probes: Iterable[type[Probe]]):
        self.probes: dict[str, type[Probe]] = {}
        for probe in probes:
            if probe.scope not in (NODE, RANK, WORLD):
                raise UsageError(f"probe {probe.id}: scope must be node, rank or world, not {probe.scope!r}")
            self.probes[probe.id] = probe  # later directories override earlier ones

    @classmethod
    def load(cls, extra_dirs: Iterable[Path] = (), entry_points: bool = True) -> "Registry":
        """Shipped probes, then entry points, then ``extra_dirs`` (which override by id)."""
        probes = probes_in_dir(probes_dir())
        if entry_points:
            probes += _entry_point_probes()
        for directory in extra_dirs:
            probes += probes_in_dir(Path(directory))
        return cls(probes)

    def get(self, probe_id: str) -> type[Probe]:
        """The probe called ``probe_id``; a UsageError listing the known ones otherwise."""
        try:
            return self.probes[probe_id]
        except KeyError:
            raise UsageError(f"unknown probe {probe_id!r}; known probes: {', '.join(sorted(self.probes))}") from None

    def select(self, only: Iterable[str] = (), skip: Iterable[str] = (),
               options: Mapping[str, Any] | None = None) -> list[type[Probe]]:
        """Probes to run: ``only`` (ids) or every default probe, minus ``skip``, ordered by (order, id).

        A probe with ``default_with`` options is a default one when any of those ``options`` is set.
        """
        only, skip, options = list(only), set(skip), options or {}
        for probe_id in [*only, *skip]:
            self.get(probe_id)
        chosen = [self.probes[p] for p in only] if only else [
            p for p in self.probes.values() if p.default or any(options.get(o) for o in p.default_with)]
        return sorted((p for p in chosen if p.id not in skip), key=lambda p: (p.order, p.id))

    def fact_specs(self) -> dict[str, tuple[str, object]]:
        """Every fact key any probe declares -> (probe id, spec)."""
        return {spec.key: (probe.id, spec) for probe in self.probes.values() for spec in probe.produces}
