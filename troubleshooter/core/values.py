"""Fact values as people read them: units from the fact's name, plain words for booleans, no Python reprs.

``readable("trainstep.step_p50_s", 0.0265)`` is ``26.5 ms``; ``readable("net.interfaces", {"lo": {"up": True}})``
is ``lo: up yes``. Used by the reports (HTML, Markdown, text) and the TUI's evidence panel.
"""

from __future__ import annotations

import math
from typing import Any

MAX_TEXT = 240
BINARY = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))


def number(value: float) -> str:
    """Three significant digits, thousands separated, never an exponent."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if float(value).is_integer():
        return str(int(value))
    decimals = min(9, max(0, 2 - math.floor(math.log10(abs(value)))))
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".")


def seconds(value: float) -> str:
    """0.0265 -> 26.5 ms; 95 -> 1 min 35 s."""
    magnitude = abs(value)
    if magnitude == 0:
        return "0 s"
    if magnitude < 1e-3:
        return f"{number(value * 1e6)} µs"
    if magnitude < 1:
        return f"{number(value * 1e3)} ms"
    if magnitude < 60:
        return f"{number(value)} s"
    minutes, rest = divmod(round(value), 60)
    return f"{minutes} min {rest} s"


def size(value: float) -> str:
    """Bytes in binary units: 16777216 -> 16 MiB."""
    for unit, scale in BINARY:
        if abs(value) >= scale:
            return f"{number(value / scale)} {unit}"
    return f"{number(value)} B"


UNIT_SUFFIXES = ("_s", "_ms", "_us", "bytes", "_gbps", "_fraction", "_share", "_per_s")


def _unit(key: str, value: float) -> str:
    name = key.rsplit(".", 1)[-1]
    if name.endswith("_per_s"):
        return f"{number(value)}/s"
    if name.endswith("_s") or name in ("seconds", "time_s"):
        return seconds(value)
    if name.endswith("_ms"):
        return seconds(value / 1e3)
    if name.endswith("_us"):
        return seconds(value / 1e6)
    if name.endswith("bytes"):
        return size(value)
    if name.endswith("_gbps"):
        return f"{number(value)} GB/s"
    if name.endswith(("_fraction", "_share")) and -10 <= value <= 10:
        return f"{number(value * 100)}%"
    return number(value)


def readable(key: str, value: Any, depth: int = 0) -> str:
    """One line for a fact value; the key's suffix picks the unit (``_s``, ``_bytes``, ``_gbps``, ``_fraction``)."""
    if value is None:
        text = "–"
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, (int, float)):
        text = _unit(key, float(value)) if isinstance(value, float) or key.endswith(UNIT_SUFFIXES) else str(value)
    elif isinstance(value, dict):
        if not value:
            text = "none"
        elif depth >= 3:
            text = f"{len(value)} entries"
        else:
            sep = "; " if depth == 0 else ", "
            text = sep.join(f"{k}: {readable(_child(key, k), v, depth + 1)}" if not isinstance(v, bool) or not v
                            else str(k) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        if not value:
            text = "none"
        elif depth >= 2 and any(isinstance(v, (dict, list, tuple)) for v in value):
            text = f"{len(value)} items"
        else:
            text = ", ".join(readable(key, v, depth + 1) for v in value)
    else:
        text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _child(key: str, name: Any) -> str:
    """A nested value keeps the parent's unit unless its own name carries one (``{"init": 0.1}`` under ``phase_s``)."""
    name = str(name)
    return f"{key}.{name}" if name.endswith(UNIT_SUFFIXES) else key


def fact_lines(key: str, value: Any, limit: int = 8) -> list[str]:
    """A fact as display lines: ``key = value`` for scalars and lists, an aligned table for a mapping.

    A mapping of mappings becomes one row per entry with a column per inner key
    (``net.interfaces``: interface, up, addresses); at most ``limit`` rows, then "… N more".
    """
    if not isinstance(value, dict) or not value:
        return [f"{key} = {readable(key, value)}"]
    rows = list(value.items())[:limit]
    columns: list[str] = []
    if all(isinstance(v, dict) for _, v in rows):
        for _, inner in rows:
            columns += [c for c in inner if c not in columns]
        table = [["", *map(str, columns)]] + [[str(name), *(readable(_child(key, c), inner.get(c), 1)
                                                            if c in inner else "–" for c in columns)]
                                             for name, inner in rows]
    else:
        table = [[str(name), readable(_child(key, name), v, 1)] for name, v in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = [f"{key}:"] + ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    if len(value) > limit:
        lines.append(f"  … {len(value) - limit} more")
    return lines
