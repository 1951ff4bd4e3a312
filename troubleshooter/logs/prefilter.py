"""Find candidate lines fast: the literal text every signature match must contain.

Most lines of a log match nothing, so the analyzer never runs the signature regexes on
them. Each pattern's required literals (derived from the parsed regex) become *anchors*,
found in one pass over a multi-megabyte chunk (see :class:`Prefilter`).
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
# Byte frequencies of distributed-training logs (share of all bytes, measured on the test
# corpus and rounded); unlisted bytes are rarer than 0.1%.
_FREQ = {**{c: 0.14 for c in b" "}, **{c: 0.04 for c in b"0eroanst"}, **{c: 0.025 for c in b"1il.:-d2cp4"},
         **{c: 0.015 for c in b"u[]|gkm3/\n"}, **{c: 0.009 for c in b"hCN=I_58"},
         **{c: 0.005 for c in b",b*vFLO6fy7"}, **{c: 0.0025 for c in b"TEPD()><RUxS"},
         **{c: 0.0012 for c in b"w\"AGBWMz"}}


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


def _trie(pieces: list[bytes]) -> bytes:
    """A regex matching any of ``pieces``, longest first, factored by common prefixes."""
    root: dict = {}
    for piece in pieces:
        node = root
        for byte in piece:
            node = node.setdefault(byte, {})
        node[None] = True

    def emit(node: dict) -> bytes:
        branches = [re.escape(bytes([b])) + emit(child) for b, child in sorted(node.items(), key=lambda kv: str(kv[0]))
                    if b is not None]
        if not branches:
            return b""
        body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
        return b"(?:" + body + b")?" if None in node else body

    return emit(root)


class Prefilter:
    """Finds, in a chunk of bytes, the lines that contain any anchor literal.

    Each literal is cut to a *piece* starting at its rarest byte. Every chosen first byte is
    translated to NUL (``bytes.translate`` runs at memory speed), so one regex whose literal
    first byte is NUL finds all pieces in a single pass; the pieces are translated the same
    way, so a translated match can only be a false candidate, never a miss.
    """

    def __init__(self, anchors: dict[str, list[int]]):
        """``anchors``: literal -> payloads (signature indices) to report when the literal occurs."""
        chosen: dict[bytes, list[int]] = {}
        for literal, payload in anchors.items():
            piece = self._piece(literal.encode("utf-8"))
            merged = chosen.setdefault(piece, [])
            merged += [p for p in payload if p not in merged]
        firsts = sorted({piece[0] for piece in chosen})
        self.table = bytes.maketrans(bytes(firsts), b"\0" * len(firsts))
        self._payload: dict[bytes, set[int]] = {}
        for piece, payload in chosen.items():
            self._payload.setdefault(piece.translate(self.table), set()).update(payload)
        for piece in list(self._payload):  # the regex reports the longest piece at a position
            for other, payload in self._payload.items():
                if piece != other and piece.startswith(other):
                    self._payload[piece] |= payload
        tails = [piece[1:] for piece in self._payload]
        self.regex = re.compile(b"\0(?=(" + _trie(tails) + b"))")

    @staticmethod
    def _piece(literal: bytes) -> bytes:
        """The literal from its rarest byte on (keeping at least MIN_ANCHOR bytes), at most MAX_ANCHOR long."""
        last = max(len(literal) - MIN_ANCHOR, 0)
        start = min(range(last + 1), key=lambda i: (_FREQ.get(literal[i], 0.0005), i))
        return literal[start:start + MAX_ANCHOR]

    def candidates(self, chunk: bytes) -> dict[int, set[int]]:
        """Line start offset -> payloads, for every line of ``chunk`` that may contain an anchor."""
        found: dict[int, set[int]] = {}
        payload = self._payload
        for match in self.regex.finditer(chunk.translate(self.table)):
            start = chunk.rfind(b"\n", 0, match.start()) + 1
            hits = payload[b"\0" + match.group(1)]
            if start in found:
                found[start] |= hits
            else:
                found[start] = set(hits)
        return found

    def line_payloads(self, line: bytes) -> set[int]:
        """Payloads whose anchors may occur in one line (the streaming path)."""
        out: set[int] = set()
        for match in self.regex.finditer(line.translate(self.table)):
            out |= self._payload[b"\0" + match.group(1)]
        return out

    def scan(self, chunk: bytes) -> Iterator[tuple[int, set[int]]]:
        """Candidate lines of ``chunk`` in order, as (line start offset, payloads)."""
        found = self.candidates(chunk)
        for start in sorted(found):
            yield start, found[start]
