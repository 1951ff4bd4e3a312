"""Bulk scans of ``unique`` fact signatures that skip the lines whose values are already known.

A ``unique`` fact (NCCL version, transports, interfaces...) is read from lines an NCCL_DEBUG=INFO
log repeats all through it: a ``findall`` over each 4 MB chunk costs one pass of Python's regex
engine per pattern plus every repeat. A fact pattern starts with literal text, never matches a
newline and, when context-free (no ``^ $ \\b``, lookaround or back-reference), finds in a line
only what the line's text from the first occurrence of that literal (its *rest*) decides. So
:class:`FactScan` remembers the rests it has read (a bounded set) and asks RE2 for the next
occurrence of the literal whose rest is none of them: one regex, the literal followed by the
complement of a trie of the known rests, which RE2 runs as a DFA, skipping the literal's
occurrences by ``memchr``. Only lines with a new rest reach ``findall``; a line whose rest is
known gives values already returned earlier. Other fact signatures, and the stdlib engine, use
:meth:`Signature.bulk_values <troubleshooter.logs.signatures.Signature.bulk_values>`.
"""

from __future__ import annotations

from typing import Any, Callable

from troubleshooter.logs.prefilter import leading_literal, may_match_newline, re2, re2_escape, re2_spans
from troubleshooter.logs.signatures import Signature

MAX_KNOWN = 128       # rests remembered per scan (the regex grows with them)
MAX_REST = 160        # bytes of a rest worth remembering (longer lines are always read)
MAX_KNOWN_BYTES = 1 << 12  # bytes of all rests remembered (a compile takes 1-3 ms per 1,000 bytes)
MAX_NEW_LINES = 256   # lines with a new rest read one by one in a chunk before one findall reads the rest
STALE = 8             # lines reported with a rest learnt since the last compile before compiling again, plus
                      # two per byte of the known rests: a compile costs about what those reports did
RE2_MEMORY = 16 << 20
_END = -1             # trie key: a known rest ends here
_EOL = rb"(?:\x0a|\z)"


def _complement(node: dict) -> bytes:
    """A regex for the rests (up to and with the line end) that are not in the trie under ``node``."""
    children = sorted(key for key in node if key != _END)
    branches = [re2_escape(bytes([byte])) + _complement(node[byte]) for byte in children]
    branches.append(b"[^\\x0a" + b"".join(b"\\x%02x" % byte for byte in children) + b"][^\\x0a]*" + _EOL)
    if _END not in node:
        branches.append(_EOL)  # the line ends on a prefix of known rests: a new rest
    return b"(?:" + b"|".join(branches) + b")"


class FactScan:
    """The raw values one fact signature collects from each chunk of whole lines it is shown, in order.

    For an RE2 scan (``engine == "re2"``, a ``unique`` context-free pattern with a leading literal) a
    value returned once is not returned again from a line whose rest was read before; the analyzer
    keeps each distinct value once anyway, so the fact is the same as a full ``findall``'s."""

    def __init__(self, sig: Signature, engine: str | None):
        self.sig = sig
        pattern = sig.regex.pattern
        literal = leading_literal(pattern).encode("utf-8")
        usable = (engine == "re2" and re2 is not None and sig.collect == "unique" and sig.context_free
                  and not may_match_newline(pattern))
        self._literal = literal if usable and literal else b""
        self._known: set[bytes] = set()
        self._known_max = MAX_KNOWN
        self._known_bytes = 0
        self._full = False         # the last rest to learn found no room
        self._compiled = 0         # len(self._known) when the regex was compiled
        self._stale = 0
        self._returned: set[bytes] = set()
        self._span: Callable[[Any, int, int], tuple[int, int]] | None = None

    def values(self, data: bytes) -> list[bytes]:
        """What the chunk ``data`` adds: ``bulk_values``' answer, less values of lines read before."""
        if not self._literal:
            return self.sig.bulk_values(data)
        findall, size = self.sig.bregex.findall, len(data)
        found: dict[bytes, None] = {}
        pos, new_lines = 0, 0
        if self._span is None and not self._compile():
            self._literal = b""  # RE2 refused even the first regex: the plain scan from now on
            return self.sig.bulk_values(data)
        while pos < size:
            recompile = self._stale >= STALE + 2 * self._known_bytes and len(self._known) > self._compiled
            if recompile and not self._compile():
                self._known_max = len(self._known)  # the regex stays as it was: learn no more
            start = self._span(data, pos, size)[0]
            if start < 0:
                break
            line = data.rfind(b"\n", 0, start) + 1
            end = data.find(b"\n", start)
            end = size if end < 0 else end
            rest = bytes(data[start + len(self._literal):end])
            if rest in self._known:  # learnt after the regex was compiled
                self._stale += 1
            else:
                values = findall(data, line, end)
                found.update(dict.fromkeys(values))
                self._returned.update(values)
                self._learn(data, start, line, end, rest, values)
                new_lines += 1
                if new_lines >= MAX_NEW_LINES:  # lines of many kinds: one findall over the rest of the chunk
                    values = findall(data, end, size)
                    found.update(dict.fromkeys(values))
                    self._returned.update(values)
                    if self._full:  # and no room to learn more: the plain scan from the next chunk on
                        self._literal = b""
                    break
            pos = end + 1
        return list(found)

    def _learn(self, data: bytes, start: int, line: int, end: int, rest: bytes, values: list[bytes]) -> None:
        """Remember ``rest`` when every value a line with this rest can give has been returned."""
        if len(rest) > MAX_REST:
            return
        self._full = len(self._known) >= self._known_max or self._known_bytes + len(rest) > MAX_KNOWN_BYTES
        if self._full:
            return
        if data.find(self._literal, line, start + len(self._literal) - 1) >= 0:  # not the line's first occurrence:
            # what a line that starts with this rest gives is read from here alone
            values = self.sig.bregex.findall(data, start, end)
        if self._returned.issuperset(values):
            self._known.add(rest)
            self._known_bytes += len(rest)

    def _compile(self) -> bool:
        """The regex for the literal followed by a rest that is not known (RE2, Latin-1: bytes are bytes);
        False if RE2 refuses it."""
        trie: dict = {}
        for rest in self._known:
            node = trie
            for byte in rest:
                node = node.setdefault(byte, {})
            node[_END] = True
        options = re2.Options()
        options.encoding = re2.Options.Encoding.LATIN1
        options.never_capture = True
        options.log_errors = False
        options.max_mem = RE2_MEMORY
        try:
            regex = re2.compile(re2_escape(self._literal) + _complement(trie), options)
        except re2.error:
            return False
        self._span = re2_spans(regex)
        self._compiled, self._stale = len(self._known), 0
        return True
