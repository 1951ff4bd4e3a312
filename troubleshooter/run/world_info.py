"""``WorldInfo``: the world a run diagnosed, giving both the report's ``world`` block and the ``world.*`` facts."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping


@dataclass
class WorldInfo:
    """Size, launcher, backend and node count of the diagnosed world (None: not known)."""

    size: int | None = None
    launcher: str | None = None
    backend: str | None = None
    nodes: int | None = None

    def block(self) -> dict[str, Any]:
        """The report's ``world`` block."""
        return {k: v for k, v in asdict(self).items() if v is not None or k in ("size", "launcher", "backend")}

    def facts(self) -> dict[str, Any]:
        """The ``world.*`` facts (only what is known)."""
        return {f"world.{k}": v for k, v in asdict(self).items() if v is not None}

    def update(self, other: "WorldInfo") -> None:
        """Take every value ``other`` knows."""
        for key, value in asdict(other).items():
            if value is not None:
                setattr(self, key, value)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "WorldInfo":
        """Back from :meth:`block` (the TUI's recovery file)."""
        data = data or {}
        return cls(**{k: data.get(k) for k in ("size", "launcher", "backend", "nodes")})
