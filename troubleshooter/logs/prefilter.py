"""Find candidate lines fast: the literal text every signature match must contain.

Most lines of a log match nothing, so the analyzer never runs the signature regexes on
them. Each pattern's required literals (derived from the parsed regex) become *anchors*;
anchors are grouped by one rare first byte each, and each group is one regex whose
literal first byte lets the regex engine skip ahead at memchr speed. A handful of such
passes over a multi-megabyte chunk finds every line that could match anything.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator

try:  # Python 3.11+
    import re._parser as _sre_parse  # type: ignore[import-not-found]
    from re._constants import BRANCH, LITERAL, MAX_REPEAT, MIN_REPEAT, SUBPATTERN  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.9/3.10
    import sre_parse as _sre_parse  # type: ignore[no-redef]
    from sre_constants import BRANCH, LITERAL, MAX_REPEAT, MIN_REPEAT, SUBPATTERN  # type: ignore[no-redef]

MIN_ANCHOR = 3
MAX_ANCHOR = 12
# Rough byte frequencies of training logs (share of all bytes; unlisted bytes ~0.001). A pass
# costs about as much as ~0.4% of its bytes being candidate hits, hence the weight in _cost.
_FREQ = {**{c: 0.015 for c in b"bfgkmpvwy"}, **{c: 0.03 for c in b"cdhlu0123456789"},
         **{c: 0.05 for c in b"etaoinsr "}, **{c: 0.02 for c in b".:/_-[]()=,"},
         **{c: 0.008 for c in b"NCLIOFPRST"}}


def _flatten(items: Iterable) -> list:
    """Inline mandatory groups so ``EADDR(IN)USE`` reads as one literal run."""
    out: list = []
    for op, av in items:
        if op is SUBPATTERN and not (len(av[-1]) == 1 and list(av[-1])[0][0] is BRANCH):
            out += _flatten(av[-1])
        else:
            out.append((op, av))
    return out


def _best(candidates: list[list[str]]) -> list[str] | None:
    good = [c for c in candidates if c and min(map(len, c)) >= MIN_ANCHOR]
    if not good:
        return None
    return max(good, key=lambda c: (-len(c), min(map(len, c))))


def _literals(items: Iterable) -> list[str] | None:
    """Alternatives, one of which every match of the sequence ``items`` contains."""
    candidates: list[list[str]] = []
    run: list[str] = []
    for op, av in _flatten(items):
        if op is LITERAL:
            run.append(chr(av))
            continue
        if run:
            candidates.append(["".join(run)])
            run = []
        if op is BRANCH:
            alts = [_literals(branch) for branch in av[1]]
            if all(alts):
                candidates.append([lit for alt in alts for lit in alt])  # type: ignore[union-attr]
        elif op is SUBPATTERN:
            sub = _literals(av[-1])
            if sub:
                candidates.append(sub)
        elif op in (MAX_REPEAT, MIN_REPEAT) and av[0] >= 1:
            sub = _literals(av[2])
            if sub:
                candidates.append(sub)
    if run:
        candidates.append(["".join(run)])
    return _best(candidates)


def required_literals(pattern: str) -> list[str] | None:
    """Literal strings of 3+ characters, one of which every match of ``pattern`` contains (None if unknown)."""
    try:
        parsed = _sre_parse.parse(pattern)
    except Exception:  # invalid patterns are reported by the validator
        return None
    found = _literals(list(parsed))
    return sorted(set(found)) if found else None


def _cost(byte: int) -> float:
    return 1.0 + 250.0 * _FREQ.get(byte, 0.001)


class Prefilter:
    """Maps anchor literals to payloads and finds, in a chunk of bytes, the lines containing any anchor."""

    def __init__(self, anchors: dict[str, list[int]]):
        """``anchors``: literal -> payloads (signature indices) to report when the literal occurs."""
        encoded = {lit.encode("utf-8"): payload for lit, payload in anchors.items()}
        self.patterns: list[tuple[int, re.Pattern]] = []
        self._payload: dict[bytes, list[int]] = {}
        for first, pieces in self._groups(list(encoded)).items():
            for piece, lit in pieces:
                # a piece also reports every shorter piece that is its prefix: the regex
                # reports only the longest alternative at a position
                for other, other_lit in pieces:
                    if piece.startswith(other):
                        merged = self._payload.setdefault(piece, [])
                        merged += [p for p in encoded[other_lit] if p not in merged]
            alts = sorted({re.escape(piece[1:]) for piece, _ in pieces}, key=len, reverse=True)
            # one literal byte then a lookahead: the engine scans for the byte at memchr speed and
            # consumes only that byte, so overlapping anchors are all seen
            self.patterns.append((first, re.compile(re.escape(bytes([first])) + b"(?=(" + b"|".join(alts) + b"))")))

    @staticmethod
    def _groups(literals: list[bytes]) -> dict[int, list[tuple[bytes, bytes]]]:
        """Greedy weighted set cover: few, rare first bytes that together start a piece of every literal."""
        def starts(lit: bytes) -> dict[int, bytes]:
            out: dict[int, bytes] = {}
            for i, byte in enumerate(lit):
                piece = lit[i:i + MAX_ANCHOR]
                if (len(piece) >= MIN_ANCHOR or len(lit) < MIN_ANCHOR) and byte not in out:
                    out[byte] = piece
            return out or {lit[0]: lit}

        options = {lit: starts(lit) for lit in literals}
        todo, groups = set(literals), {}
        while todo:
            counts: dict[int, int] = {}
            for lit in todo:
                for byte in options[lit]:
                    counts[byte] = counts.get(byte, 0) + 1
            byte = max(counts, key=lambda b: (counts[b] / _cost(b), -b))
            groups[byte] = [(options[lit][byte], lit) for lit in sorted(todo) if byte in options[lit]]
            todo -= {lit for _, lit in groups[byte]}
        return groups

    def candidates(self, chunk: bytes) -> dict[int, set[int]]:
        """Line start offset -> payloads, for every line of ``chunk`` that contains an anchor."""
        found: dict[int, set[int]] = {}
        for first, regex in self.patterns:
            head = bytes([first])
            for match in regex.finditer(chunk):
                start = chunk.rfind(b"\n", 0, match.start()) + 1
                found.setdefault(start, set()).update(self._payload[head + match.group(1)])
        return found

    def line_payloads(self, line: bytes) -> set[int]:
        """Payloads whose anchors occur in one line (the streaming path)."""
        out: set[int] = set()
        for first, regex in self.patterns:
            head = bytes([first])
            for match in regex.finditer(line):
                out.update(self._payload[head + match.group(1)])
        return out

    def scan(self, chunk: bytes) -> Iterator[tuple[int, set[int]]]:
        """Candidate lines of ``chunk`` in order, as (line start offset, payloads)."""
        found = self.candidates(chunk)
        for start in sorted(found):
            yield start, found[start]
