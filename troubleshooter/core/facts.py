"""Facts: flat, namespaced observations with provenance.

A fact that could not be measured is absent, never guessed. Keys are dotted
(``env.world_size``, ``net.master_reachable``); ``scan.<finding-id>`` and
``log.<finding-id>`` facts hold lists of hits (dicts with path/line/detail/rank).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping

TYPES: dict[str, tuple[type, ...]] = {
    "bool": (bool,),
    "int": (int,),
    "float": (int, float),
    "str": (str,),
    "list": (list, tuple),
    "dict": (dict,),
    "any": (object,),
}


@dataclass(frozen=True)
class FactSpec:
    """Declares a fact a probe (or scanner, log signature, question) may produce."""

    key: str
    type: str
    doc: str

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"fact {self.key}: unknown type {self.type!r}; expected one of {sorted(TYPES)}")

    def accepts(self, value: Any) -> bool:
        """True when ``value`` has this fact's declared type (bool is not an int here)."""
        if self.type in ("int", "float") and isinstance(value, bool):
            return False
        return isinstance(value, TYPES[self.type])


@dataclass(frozen=True)
class Fact:
    """One observed value and where it came from."""

    key: str
    value: Any
    source: str
    rank: int | None = None


class Facts(Mapping[str, Any]):
    """A read-only view key -> value, remembering each value's source and rank."""

    def __init__(self, facts: Iterable[Fact] = ()):
        self._facts: dict[str, Fact] = {}
        for fact in facts:
            self._facts[fact.key] = fact

    def __getitem__(self, key: str) -> Any:
        return self._facts[key].value

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts)

    def __len__(self) -> int:
        return len(self._facts)

    def provenance(self, key: str) -> Fact | None:
        """The full record of ``key`` (source probe, rank), or None when absent."""
        return self._facts.get(key)

    def with_facts(self, facts: Iterable[Fact]) -> "Facts":
        """A new view with ``facts`` added on top (later wins)."""
        merged = Facts(self._facts.values())
        for fact in facts:
            merged._facts[fact.key] = fact
        return merged

    def records(self) -> list[Fact]:
        """All facts with provenance."""
        return list(self._facts.values())

    def as_dict(self) -> dict[str, Any]:
        """Plain key -> value dict (for JSON)."""
        return {k: f.value for k, f in self._facts.items()}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], source: str, rank: int | None = None) -> "Facts":
        """Build from a plain dict, all with the same source."""
        return cls(Fact(k, v, source, rank) for k, v in values.items())
