"""Find candidate lines fast: the literal text every signature match must contain.

Most lines of a log match nothing, so the analyzer never runs the signature regexes on
them. Each pattern's required literals (derived from the parsed regex) become *anchors*,
found in one pass over a multi-megabyte chunk (see :class:`Prefilter`). With the optional
``google-re2`` package installed, that pass is one RE2 automaton over every anchor
(:class:`_Re2Scanner`); without it, a translated-bytes trick on the stdlib ``re``
(:class:`_NulScanner`). Both report the same lines.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Iterable, Iterator

try:  # optional: one DFA over every anchor, about twice as fast as the stdlib scan on big logs
    import re2  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the environment
    re2 = None

try:  # Python 3.11+
    import re._parser as _sre_parse  # type: ignore[import-not-found]
    from re._constants import (ANY, AT, ASSERT, ASSERT_NOT, BRANCH, CATEGORY,  # type: ignore[import-not-found]
                               CATEGORY_DIGIT, CATEGORY_NOT_LINEBREAK, CATEGORY_NOT_SPACE, CATEGORY_WORD, GROUPREF,
                               GROUPREF_EXISTS, IN, LITERAL, MAX_REPEAT, MIN_REPEAT, NEGATE, NOT_LITERAL, RANGE,
                               SRE_FLAG_DOTALL, SRE_FLAG_IGNORECASE, SUBPATTERN)
except ImportError:  # pragma: no cover - Python 3.9/3.10
    import sre_parse as _sre_parse  # type: ignore[no-redef]
    from sre_constants import (ANY, AT, ASSERT, ASSERT_NOT, BRANCH, CATEGORY,  # type: ignore[no-redef]
                               CATEGORY_DIGIT, CATEGORY_NOT_LINEBREAK, CATEGORY_NOT_SPACE, CATEGORY_WORD, GROUPREF,
                               GROUPREF_EXISTS, IN, LITERAL, MAX_REPEAT, MIN_REPEAT, NEGATE, NOT_LITERAL, RANGE,
                               SRE_FLAG_DOTALL, SRE_FLAG_IGNORECASE, SUBPATTERN)

MIN_ANCHOR = 3
MAX_ANCHOR = 12
SPECIFIC = 12       # a literal this long is a message of its own: preferred to a shorter one with rarer bytes
WINDOW = 1 << 16    # a chunk is scanned in windows of this size, each without the presence pieces seen before it
MAX_REDUCED = 16    # cached scanners without some presence anchors
RE2_MEMORY = 64 << 20  # RE2's budget for its automaton (allocated as states are reached)
# Byte frequencies of distributed-training logs (share of all bytes; the larger of the test
# corpus and an NCCL_DEBUG=INFO log, rounded); unlisted bytes are rarer than 0.1%.
_FREQ = {**{c: 0.1 for c in b" 0"}, **{c: 0.04 for c in b"14:aenorst"}, **{c: 0.025 for c in b"-.23C[]cdilp|"},
         **{c: 0.015 for c in b"\n/56789Nghkmu"}, **{c: 0.009 for c in b"=IP"},
         **{c: 0.005 for c in b"*,BFGLO_bfvy"}, **{c: 0.0025 for c in b"()<>DERSTUx"}, **{c: 0.0012 for c in b'"Aw'}}


def _flatten(items: Iterable) -> list:
    """Inline mandatory groups so ``EADDR(IN)USE`` reads as one literal run (not ``(?i:...)``: any case matches)."""
    out: list = []
    for op, av in items:
        folded = op is SUBPATTERN and av[1] & SRE_FLAG_IGNORECASE
        if op is SUBPATTERN and not folded and not (len(av[-1]) == 1 and list(av[-1])[0][0] is BRANCH):
            out += _flatten(av[-1])
        else:
            out.append((op, av))
    return out


def _rarity(literal: str) -> float:
    """Frequency of the literal's rarest byte (lower is better for the prefilter)."""
    return min(_FREQ.get(ord(ch), 0.0005) if ord(ch) < 128 else 0.0005 for ch in literal)


def _best(candidates: list[list[str]]) -> list[str] | None:
    """Prefer literals of 6+ characters, then fewer alternatives, then :data:`SPECIFIC` length, then a
    rarer byte, then length. Rare bytes alone mislead on the words every line of a kind repeats
    (``NET/IB`` is on each rank's NCCL start-up, ``Got completion`` only in its error)."""
    good = [c for c in candidates if c and min(map(len, c)) >= MIN_ANCHOR]
    if not good:
        return None
    return max(good, key=lambda c: (min(map(len, c)) >= 6, -len(c), min(map(len, c)) >= SPECIFIC,
                                    -max(map(_rarity, c)), min(map(len, c))))


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
        elif op is SUBPATTERN and not av[1] & SRE_FLAG_IGNORECASE:
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


@functools.lru_cache(maxsize=1024)
def _required(pattern: str) -> tuple[str, ...] | None:
    try:
        parsed = _sre_parse.parse(pattern)
    except Exception:  # invalid patterns are reported by the validator
        return None
    found = _literals(list(parsed))
    return tuple(sorted(set(found))) if found else None


def required_literals(pattern: str) -> list[str] | None:
    """Literal strings of 3+ characters, one of which every match of ``pattern`` contains (None if unknown).

    Cached: loading the rules validates each pattern and compiling the signatures asks again."""
    found = _required(pattern)
    return list(found) if found else None


@functools.lru_cache(maxsize=1024)
def leading_literal(pattern: str) -> str:
    """The literal text every match of ``pattern`` starts with ("" if none is known)."""
    try:
        parsed = _sre_parse.parse(pattern)
    except Exception:  # invalid patterns are reported by the validator
        return ""
    if parsed.state.flags & SRE_FLAG_IGNORECASE:
        return ""
    out = []
    for op, av in parsed:
        if op is not LITERAL:
            break
        out.append(chr(av))
    return "".join(out)


_CONTEXT_OPS = (AT, ASSERT, ASSERT_NOT, GROUPREF, GROUPREF_EXISTS)


def _nested(av: Any) -> Iterator:
    """The sub-patterns inside one parsed item's argument (groups, branches, repeats, atomic groups)."""
    if isinstance(av, _sre_parse.SubPattern):
        yield av
    elif isinstance(av, (tuple, list)):
        for item in av:
            yield from _nested(item)


def _context_free(items: Iterable) -> bool:
    """No anchor, boundary, lookaround or back-reference anywhere in the parsed sequence ``items``."""
    return all(op not in _CONTEXT_OPS and all(map(_context_free, _nested(av))) for op, av in items)


@functools.lru_cache(maxsize=1024)
def context_free(pattern: str) -> bool:
    """Whether a match of ``pattern`` depends only on the text it consumes (no ``^ $ \\b``, lookaround or
    back-reference): then a line without a match has no substring with one either."""
    try:
        return _context_free(_sre_parse.parse(pattern))
    except Exception:  # invalid patterns are reported by the validator
        return False


_NEWLINE = 10
_NO_NEWLINE_CATEGORIES = (CATEGORY_DIGIT, CATEGORY_WORD, CATEGORY_NOT_SPACE, CATEGORY_NOT_LINEBREAK)


def _set_has_newline(items: list) -> bool:
    """Whether a character class ``[...]`` (parsed) contains the newline."""
    negate = any(op is NEGATE for op, _ in items)
    has = any(op is LITERAL and av == _NEWLINE or op is RANGE and av[0] <= _NEWLINE <= av[1]
              or op is CATEGORY and av not in _NO_NEWLINE_CATEGORIES for op, av in items)
    return has is not negate


def _consumes_newline(items: Iterable, dotall: bool) -> bool:
    for op, av in items:
        if (op is LITERAL and av == _NEWLINE or op is NOT_LITERAL and av != _NEWLINE or op is ANY and dotall
                or op is IN and _set_has_newline(av) or op is CATEGORY and av not in _NO_NEWLINE_CATEGORIES):
            return True
        if op is SUBPATTERN:
            inner = (dotall or bool(av[1] & SRE_FLAG_DOTALL)) and not av[2] & SRE_FLAG_DOTALL
            if _consumes_newline(av[-1], inner):
                return True
        elif op not in (ASSERT, ASSERT_NOT) and any(_consumes_newline(sub, dotall) for sub in _nested(av)):
            return True
    return False


@functools.lru_cache(maxsize=1024)
def may_match_newline(pattern: str) -> bool:
    """Whether a match of ``pattern`` may contain a newline (conservative: True when unsure)."""
    try:
        parsed = _sre_parse.parse(pattern)
    except Exception:
        return True
    return _consumes_newline(parsed, bool(parsed.state.flags & SRE_FLAG_DOTALL))


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


Payloads = tuple[frozenset, frozenset]  # (line payloads, chunk payloads)


def _covered(units: dict[bytes, Payloads], key: bytes) -> Payloads:
    """The payloads of every unit that ``key`` starts with (itself included), of either kind."""
    line: set[int] = set()
    chunk: set[int] = set()
    for end in range(1, len(key) + 1):
        payloads = units.get(key[:end])
        if payloads is not None:
            line |= payloads[0]
            chunk |= payloads[1]
    return frozenset(line), frozenset(chunk)


def re2_escape(text: bytes) -> bytes:
    """``text`` as an RE2 literal (every byte but ASCII letters and digits written ``\\xHH``)."""
    return re.sub(rb"[^A-Za-z0-9]", lambda m: b"\\x%02x" % m.group()[0], text)


def re2_spans(regex: Any) -> Callable[[bytes, int, int], tuple[int, int]]:
    """For a compiled RE2 ``regex``: ``(text, pos, endpos) -> (start, end)`` of the next match, ``(-1, -1)`` if none."""
    try:  # the wrapper's search adds a generator and a match object per call: go one level down
        match, unanchored = regex._regexp.Match, re2._Anchor.UNANCHORED
        return lambda text, pos, endpos: match(unanchored, text, pos, endpos)[0]
    except AttributeError:  # pragma: no cover - another google-re2 layout
        return lambda text, pos, endpos: (m.span() if (m := regex.search(text, pos, endpos)) else (-1, -1))


class _Scanner:
    """Finds the *units* (anchor literals, or pieces of them) of one set in a chunk.

    ``find(chunk, pos, end)`` yields ``(offset, (line payloads, chunk payloads), key)`` for each
    match starting in ``[pos, end)``; a match stands for the longest unit at its offset and its
    payloads cover every unit it extends. ``presence_only`` maps the keys whose matches carry
    only chunk payloads to their units, so that a chunk's rest can be scanned ``without`` them.
    """

    def __init__(self, units: dict[bytes, Payloads]):
        self.units = units

    def without(self, dropped: frozenset) -> "_Scanner":
        return type(self)({unit: payloads for unit, payloads in self.units.items() if unit not in dropped})

    def find(self, chunk: bytes, pos: int, end: int) -> Iterator[tuple[int, Payloads, bytes]]:
        raise NotImplementedError


class _Re2Scanner(_Scanner):
    """Whole anchor literals in one RE2 alternation, longest first: RE2 runs it as a DFA at a few
    hundred MB/s whatever the number of anchors, and reports only real occurrences."""

    def __init__(self, units: dict[bytes, Payloads]):
        super().__init__(units)
        ordered = sorted(units, key=lambda unit: (-len(unit), unit))  # leftmost-first: the longest unit wins
        self.payload = {unit: _covered(units, unit) for unit in units}
        self.presence_only = {unit: frozenset([unit]) for unit, (hits, _) in self.payload.items() if not hits}
        self.longest = len(ordered[0]) if ordered else 0
        options = re2.Options()
        options.encoding = re2.Options.Encoding.LATIN1  # bytes are bytes, whatever the log's encoding
        options.never_capture = True
        options.log_errors = False
        # the lazily built DFA must fit: past its budget RE2 falls back to a 100x slower NFA
        # (1,750 anchors: 12 ms per 4 MB chunk with 64 MiB, 5 s with the default 8 MiB)
        options.max_mem = RE2_MEMORY
        pattern = b"|".join(map(re2_escape, ordered))
        self._span = re2_spans(re2.compile(pattern, options)) if ordered else None

    def find(self, chunk: bytes, pos: int, end: int) -> Iterator[tuple[int, Payloads, bytes]]:
        if self._span is None:
            return
        limit = min(len(chunk), end + self.longest)
        while pos <= limit:
            start, stop = self._span(chunk, pos, limit)
            if start < 0 or start >= end:
                return
            key = bytes(chunk[start:stop])
            yield start, self.payload[key], key
            pos = start + 1  # anchors may overlap


class _NulScanner(_Scanner):
    """Pieces of the anchors, each starting at a rare byte (:meth:`Prefilter._pieces`). Every
    first byte is translated to NUL (``bytes.translate`` runs at memory speed), so one regex
    whose literal first byte is NUL finds all pieces in a single pass; the pieces are translated
    the same way, so a translated match can only be a false candidate, never a miss."""

    def __init__(self, units: dict[bytes, Payloads]):
        super().__init__(units)
        firsts = sorted({piece[0] for piece in units})
        self.table = bytes.maketrans(bytes(firsts), b"\0" * len(firsts))
        translated: dict[bytes, Payloads] = {}
        origins: dict[bytes, set[bytes]] = {}
        for piece, (line, chunk) in units.items():
            key = piece.translate(self.table)
            origins.setdefault(key[1:], set()).add(piece)
            have = translated.get(key, (frozenset(), frozenset()))
            translated[key] = (have[0] | line, have[1] | chunk)
        # the regex reports the longest piece at a position: it stands for every piece it extends, of either kind
        self.payload = {key[1:]: _covered(translated, key) for key in translated}
        self.presence_only = {tail: frozenset(origins[tail]) for tail, (hits, _) in self.payload.items() if not hits}
        self.regex = re.compile(b"\0(?=(" + _trie(list(self.payload)) + b"))") if units else None

    def find(self, chunk: bytes, pos: int, end: int) -> Iterator[tuple[int, Payloads, bytes]]:
        if self.regex is None:
            return
        payload = self.payload
        for match in self.regex.finditer(chunk[pos:end + MAX_ANCHOR].translate(self.table)):  # only this window
            start = pos + match.start()
            if start >= end:
                return
            key = match.group(1)
            yield start, payload[key], key


class Prefilter:
    """Finds, in a chunk of bytes, the lines that contain any anchor literal.

    Line anchors report the lines they occur on; presence anchors only report that they occur
    somewhere in the chunk (their signatures then scan the chunk in bulk). The chunk is scanned in
    windows of :data:`WINDOW` bytes: presence anchors seen in one are not looked for in the rest of
    the chunk (in NCCL INFO logs they are on most lines).
    ``engine`` is ``"re2"`` or ``"stdlib"`` (default: RE2 when installed).
    """

    def __init__(self, anchors: dict[str, list[int]], presence: dict[str, list[int]] | None = None,
                 engine: str | None = None):
        """``anchors``: literal -> payloads to report with the line they occur on; ``presence``:
        literal -> payloads to report only as present somewhere in the chunk (for bulk scans)."""
        engine = engine or ("re2" if re2 is not None else "stdlib")
        if engine == "re2" and re2 is None:
            raise ValueError("the re2 engine needs the google-re2 package")
        literals: dict[bytes, tuple[set[int], set[int]]] = {}
        for kind, table in enumerate((anchors, presence or {})):
            for literal, payload in table.items():
                literals.setdefault(literal.encode("utf-8"), (set(), set()))[kind].update(payload)
        units: dict[bytes, tuple[set[int], set[int]]] = {}
        if engine == "re2":
            units = literals
        else:
            for literal, piece in self._pieces(list(literals)):
                have = units.setdefault(piece, (set(), set()))
                have[0].update(literals[literal][0])
                have[1].update(literals[literal][1])
        self.engine = engine
        self._scanner: _Scanner = (_Re2Scanner if engine == "re2" else _NulScanner)(
            {unit: (frozenset(line), frozenset(chunk)) for unit, (line, chunk) in units.items()})
        self._reduced: dict[frozenset, _Scanner] = {}

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

    def _without(self, dropped: frozenset) -> _Scanner:
        """The scanner without the units ``dropped`` (presence anchors already seen in a chunk's head)."""
        if not dropped:
            return self._scanner
        scanner = self._reduced.get(dropped)
        if scanner is None:
            if len(self._reduced) >= MAX_REDUCED:
                self._reduced.clear()
            scanner = self._reduced[dropped] = self._scanner.without(dropped)
        return scanner

    def candidates(self, chunk: bytes) -> tuple[dict[int, set[int]], set[int]]:
        """Line start offset -> line payloads for every line that may contain an anchor, and the
        presence payloads whose literals may occur anywhere in ``chunk``."""
        found: dict[int, set[int]] = {}
        present: set[int] = set()
        scanner, seen, dropped = self._scanner, set(), 0
        presence_only = scanner.presence_only
        pos, end = 0, min(WINDOW, len(chunk))
        start, looked = 0, 0  # the line start is searched only back to the previous match: linear on long lines
        while True:
            for offset, (hits, chunk_hits), key in scanner.find(chunk, pos, end):
                if chunk_hits:
                    present |= chunk_hits
                    seen.add(key)
                if hits:
                    start = max(start, chunk.rfind(b"\n", looked, offset) + 1)
                    looked = offset
                    if start in found:
                        found[start] |= hits
                    else:
                        found[start] = set(hits)
            if end >= len(chunk):
                return found, present
            # the next window is scanned without the presence anchors seen so far
            if len(seen) > dropped:
                dropped = len(seen)
                scanner = self._without(frozenset(unit for key in seen if key in presence_only
                                                  for unit in presence_only[key]))
            pos, end = end, min(end + WINDOW, len(chunk))

    def line_payloads(self, line: bytes) -> set[int]:
        """Payloads (of both kinds) whose anchors may occur in one line (the streaming path)."""
        out: set[int] = set()
        for _, (hits, chunk_hits), _ in self._scanner.find(line, 0, len(line)):
            out |= hits | chunk_hits
        return out

    def scan(self, chunk: bytes) -> tuple[list[tuple[int, set[int]]], set[int]]:
        """Candidate lines of ``chunk`` in order as (line start offset, payloads), and the present payloads."""
        found, present = self.candidates(chunk)
        return [(start, found[start]) for start in sorted(found)], present
