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
HEAD = 1 << 16      # bytes of a chunk scanned with every piece before presence pieces seen there are dropped
MAX_REDUCED = 16    # cached regexes without some presence pieces
# Byte frequencies of distributed-training logs (share of all bytes; the larger of the test
# corpus and an NCCL_DEBUG=INFO log, rounded); unlisted bytes are rarer than 0.1%.
_FREQ = {**{c: 0.1 for c in b" 0"}, **{c: 0.04 for c in b"14:aenorst"}, **{c: 0.025 for c in b"-.23C[]cdilp|"},
         **{c: 0.015 for c in b"\n/56789Nghkmu"}, **{c: 0.009 for c in b"=IP"},
         **{c: 0.005 for c in b"*,BFGLO_bfvy"}, **{c: 0.0025 for c in b"()<>DERSTUx"}, **{c: 0.0012 for c in b'"Aw'}}


def _flatten(items: Iterable) -> list:
    """Inline mandatory groups so ``EADDR(IN)USE`` reads as one literal run."""
    out: list = []
    for op, av in items:
        if op is SUBPATTERN and not (len(av[-1]) == 1 and list(av[-1])[0][0] is BRANCH):
            out += _flatten(av[-1])
        else:
            out.append((op, av))
    return out


def _rarity(literal: str) -> float:
    """Frequency of the literal's rarest byte (lower is better for the prefilter)."""
    return min(_FREQ.get(ord(ch), 0.0005) if ord(ch) < 128 else 0.0005 for ch in literal)


def _best(candidates: list[list[str]]) -> list[str] | None:
    """Prefer literals of 6+ characters, then fewer alternatives, then a rarer byte, then length."""
    good = [c for c in candidates if c and min(map(len, c)) >= MIN_ANCHOR]
    if not good:
        return None
    return max(good, key=lambda c: (min(map(len, c)) >= 6, -len(c), -max(map(_rarity, c)), min(map(len, c))))


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

    Line anchors report the lines they occur on; presence anchors only report that they occur
    somewhere in the chunk (their signatures then scan the chunk in bulk).
    Each literal is cut to a *piece* starting at its rarest byte. Every chosen first byte is
    translated to NUL (``bytes.translate`` runs at memory speed), so one regex whose literal
    first byte is NUL finds all pieces in a single pass; the pieces are translated the same
    way, so a translated match can only be a false candidate, never a miss.
    """

    def __init__(self, anchors: dict[str, list[int]], presence: dict[str, list[int]] | None = None):
        """``anchors``: literal -> payloads to report with the line they occur on; ``presence``:
        literal -> payloads to report only as present somewhere in the chunk (for bulk scans)."""
        literals: dict[bytes, list[int]] = {}
        kinds: dict[bytes, set[str]] = {}
        for kind, table in (("line", anchors), ("chunk", presence or {})):
            for literal, payload in table.items():
                key = literal.encode("utf-8")
                literals.setdefault(key, []).extend(p for p in payload if p not in literals.get(key, []))
                kinds.setdefault(key, set()).add(kind)
        pieces = {"line": {}, "chunk": {}}
        for lit, piece in self._pieces(list(literals)):
            for kind in kinds[lit]:
                own = anchors if kind == "line" else presence
                payload = own[lit.decode("utf-8")]
                merged = pieces[kind].setdefault(piece, [])
                merged += [p for p in payload if p not in merged]
        self._reduced: dict[frozenset, re.Pattern] = {}
        firsts = sorted({piece[0] for table in pieces.values() for piece in table})
        self.table = bytes.maketrans(bytes(firsts), b"\0" * len(firsts))
        line, chunk = self._translated(pieces["line"]), self._translated(pieces["chunk"])
        # the regex reports the longest piece at a position: it stands for every piece it extends, of either kind
        every = {*line, *chunk}
        self._payload = {piece[1:]: (self._covered(line, piece), self._covered(chunk, piece)) for piece in every}
        self.regex = self._compiled(frozenset())
        self._presence_only = {piece for piece, (hits, _) in self._payload.items() if not hits}

    def _compiled(self, dropped: frozenset) -> re.Pattern:
        """The scanning regex over every piece but ``dropped`` (presence pieces already seen in a chunk)."""
        return re.compile(b"\0(?=(" + _trie([p for p in self._payload if p not in dropped]) + b"))")

    def _translated(self, pieces: dict[bytes, list[int]]) -> dict[bytes, set[int]]:
        out: dict[bytes, set[int]] = {}
        for piece, payload in pieces.items():
            out.setdefault(piece.translate(self.table), set()).update(payload)
        return out

    @staticmethod
    def _covered(table: dict[bytes, set[int]], piece: bytes) -> set[int]:
        """Payloads of ``table``'s pieces that ``piece`` starts with (itself included)."""
        return {p for other, payload in table.items() if piece.startswith(other) for p in payload}

    @staticmethod
    def _pieces(literals: list[bytes]) -> Iterator[tuple[bytes, bytes]]:
        """(literal, piece): each literal cut at a rare byte, reusing bytes already chosen so the set stays rare."""
        def starts(lit: bytes) -> list[int]:
            return list(range(max(len(lit) - MIN_ANCHOR, 0) + 1))

        def freq(byte: int) -> float:
            return _FREQ.get(byte, 0.0005)

        firsts: set[int] = set()
        # the literals with the fewest rare bytes choose first
        for lit in sorted(literals, key=lambda lit: (min(freq(lit[i]) for i in starts(lit)), lit), reverse=True):
            best = min(starts(lit), key=lambda i: (freq(lit[i]), i))
            reuse = [i for i in starts(lit) if lit[i] in firsts and freq(lit[i]) <= 2 * freq(lit[best])]
            start = min(reuse, key=lambda i: (freq(lit[i]), i)) if reuse else best
            firsts.add(lit[start])
            yield lit, lit[start:start + MAX_ANCHOR]

    def candidates(self, chunk: bytes) -> tuple[dict[int, set[int]], set[int]]:
        """Line start offset -> line payloads for every line that may contain an anchor, and the
        presence payloads whose literals may occur anywhere in ``chunk``."""
        found: dict[int, set[int]] = {}
        present: set[int] = set()
        payload = self._payload
        translated = chunk.translate(self.table)
        # presence pieces seen in the head need not be matched again (in NCCL INFO logs they are on
        # most lines): the rest of the chunk is scanned with a regex without them
        seen: set[bytes] = set()
        regex, pos = self.regex, 0
        start, looked = 0, 0  # the line start is searched only back to the previous match: linear on long lines
        for end in (HEAD, len(translated) + 1):
            for match in regex.finditer(translated, pos):
                if match.start() >= end:
                    break  # the next pass finds it again
                piece = match.group(1)
                hits, chunk_hits = payload[piece]
                if chunk_hits:
                    present |= chunk_hits
                    seen.add(piece)
                if hits:
                    start = max(start, chunk.rfind(b"\n", looked, match.start()) + 1)
                    looked = match.start()
                    if start in found:
                        found[start] |= hits
                    else:
                        found[start] = set(hits)
            pos = end
            regex = self._without(frozenset(seen & self._presence_only))
        return found, present

    def _without(self, dropped: frozenset) -> re.Pattern:
        if not dropped:
            return self.regex
        regex = self._reduced.get(dropped)
        if regex is None:
            if len(self._reduced) >= MAX_REDUCED:
                self._reduced.clear()
            regex = self._reduced[dropped] = self._compiled(dropped)
        return regex

    def line_payloads(self, line: bytes) -> set[int]:
        """Payloads (of both kinds) whose anchors may occur in one line (the streaming path)."""
        out: set[int] = set()
        for match in self.regex.finditer(line.translate(self.table)):
            hits, chunk_hits = self._payload[match.group(1)]
            out |= hits | chunk_hits
        return out

    def scan(self, chunk: bytes) -> tuple[list[tuple[int, set[int]]], set[int]]:
        """Candidate lines of ``chunk`` in order as (line start offset, payloads), and the present payloads."""
        found, present = self.candidates(chunk)
        return [(start, found[start]) for start in sorted(found)], present
