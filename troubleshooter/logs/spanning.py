"""Join the rows of a message that a paste broke, when the message's own wording says so.

:mod:`troubleshooter.logs.framing` undoes a terminal's hard wrap and a forum's re-flow from the shape of a
paste's rows (one width, words that would not have fitted). A paste can also break a line where no shape
shows it: a two-row excerpt, a re-flow whose next row begins like a line of its own (``error 12, ...``,
``[::ffff:10.0.0.1]:29500 ...``), a reporter's editor, a cut inside a word at a width no other row reaches
(``... DUE TO TI`` / ``ME LIMIT ...``). The signatures know better: each is a wording family, so when one
matches a few adjacent rows joined (with the space a break took, or with none for a cut inside a word) and
matches none of those rows alone, the rows are one message that the paste broke. This module finds such
rows; what a match is stays the analyzer's (a :class:`Reader`).

A row that carries a known prefix (a rank label, a time) continues the row before it only when that row
carries the same prefix (a launcher labels every row a program printed); an empty row ends every message.
"""

from __future__ import annotations

from typing import Protocol

from troubleshooter.logs.lineprefix import split_prefix
from troubleshooter.logs.symptomwords import SymptomWords

MAX_SPAN = 4        # rows one broken message is joined across
MAX_ROWS = 2000     # a longer log is a program's file, not a paste someone broke (and ~0.2 ms a row would add up)
SEPARATORS = (" ", "")  # the space a re-flow took; none where a terminal cut inside a word


class Reader(Protocol):
    """What the analyzer's signatures read in texts taken as one line each."""

    def candidates(self, texts: list[str]) -> list[frozenset]:
        """For each text (no newline in any), the signatures whose anchors it holds (the prefilter, one pass)."""

    def matching(self, text: str, among: frozenset | None = None) -> frozenset:
        """The signatures (of ``among``, default: the candidates) that match ``text``."""


def _split(row: str, words: SymptomWords) -> tuple[str, str]:
    """(the known prefixes ``row`` begins with, a rank label or a time, without spaces; the rest)."""
    if not words.prefix.match(row):
        return "", row
    end = len(row.rstrip()) - len(split_prefix(row, words=words).body)
    lead = row[:end].strip()
    return (lead, row[end:]) if lead else ("", row)


def _continued(text: str, separator: str, rest: str) -> str:
    """``text`` followed by the next row's ``rest``: after one space (the one a re-flow took), or right after it
    (a terminal's cut, which keeps a space it cut before)."""
    return text + separator + rest.lstrip(" ") if separator else text + rest


def _continuation(row: str, part: tuple[str, str], prefix: str) -> str | None:
    """What ``row`` (split into ``part``) adds to a message whose first row carries ``prefix``: the row after its
    prefix when it carries the same one (a launcher labels every row a program printed), the whole row when it
    carries none (a terminal's cut of a labelled line) or the message's first row none (a time inside the
    message: ``... CANCELLED AT`` / ``2020-07-03T02:59:56 DUE TO TIME LIMIT``), None under another prefix
    (another rank's line, another time's)."""
    lead, rest = part
    if lead and prefix:
        return rest if lead == prefix else None
    return row


class _Rows:
    """A paste's rows, with the candidate signatures of each row and of each seam (two rows joined), and what
    each row matches alone (only where a join is weighed)."""

    def __init__(self, rows: list[str], reader: Reader, words: SymptomWords):
        self.rows, self.reader = rows, reader
        self.parts = [_split(row, words) for row in rows]
        self.width = max(map(len, rows), default=0)
        self.own = reader.candidates(rows)
        nexts = [_continuation(row, part, before[0]) or row
                 for row, part, before in zip(rows[1:], self.parts[1:], self.parts)]
        self.seams = {separator: reader.candidates([_continued(row, separator, nxt) for row, nxt in zip(rows, nexts)])
                      for separator in SEPARATORS}
        self._alone: dict[int, frozenset] = {}

    def alone(self, i: int) -> frozenset:
        """The signatures row ``i`` matches by itself."""
        if i not in self._alone:
            self._alone[i] = self.reader.matching(self.rows[i], self.own[i]) if self.own[i] else frozenset()
        return self._alone[i]

    def text(self, first: int, last: int, separator: str) -> str | None:
        """Rows ``first`` to ``last`` joined (see :func:`_continuation`), or None when one is no continuation."""
        text, prefix = self.rows[first], self.parts[first][0]
        for i in range(first + 1, last + 1):
            more = _continuation(self.rows[i], self.parts[i], prefix)
            if more is None or not self.rows[i].strip():
                return None
            text = _continued(text, separator, more)
        return text

    def message(self, first: int) -> tuple[int, str] | None:
        """(last row, separator) of the broken message that starts at row ``first``, or None: the fewest rows
        from ``first`` whose join has a signature that none of them has alone, and that the rows after
        ``first`` joined without it do not have (a message does not begin a row early). A row as long as the
        paste's longest is first read as a terminal's cut (no separator), any other as a re-flow's break."""
        if not self.rows[first].strip():
            return None
        for separator in SEPARATORS[::-1] if len(self.rows[first]) == self.width else SEPARATORS:
            among: set = set()
            for last in range(first + 1, min(first + MAX_SPAN, len(self.rows))):
                text = self.text(first, last, separator)
                if text is None:
                    break
                among |= self.seams[separator][last - 1]
                if not among:
                    continue
                todo = frozenset(among.difference(*(self.alone(i) for i in range(first, last + 1))))
                new = self.reader.matching(text, todo) if todo else todo
                if new:
                    if new <= self.reader.matching(self.text(first + 1, last, separator) or "", new):
                        break
                    return last, separator
        return None


def spanning_joins(rows: list[str], reader: Reader, words: SymptomWords) -> dict[int, str]:
    """The rows of ``rows`` to join to the next one, with the separator each join takes: row ``i`` and up to
    :data:`MAX_SPAN` - 1 rows after it are one message when the signatures (``reader``) find one in them
    joined that they find in none of them alone."""
    paste = _Rows(rows, reader, words)
    joins: dict[int, str] = {}
    i = 0
    while i < len(rows) - 1:
        span = paste.message(i)
        if span is None:
            i += 1
            continue
        last, separator = span
        joins.update(dict.fromkeys(range(i, last), separator))
        i = last + 1
    return joins


def joined(rows: list[str], joins: dict[int, str], words: SymptomWords) -> list[str]:
    """``rows`` with each row of ``joins`` joined to the next (with its separator, see :func:`_continuation`);
    joined-away rows stay as empty lines, so line numbers still point into the file as it is."""
    out: list[str] = []
    empties, prefix = 0, ""
    for i, row in enumerate(rows):
        if i - 1 in joins:
            out[-1] = _continued(out[-1], joins[i - 1], _continuation(row, _split(row, words), prefix) or row)
            empties += 1
        else:
            out.extend([""] * empties)
            empties, prefix = 0, _split(row, words)[0]
            out.append(row)
    out.extend([""] * empties)
    return out


def rows_of(data: bytes) -> tuple[list[str], str]:
    """The rows of a paste and its line end."""
    text = data.decode("utf-8", "surrogateescape")
    return [row.rstrip("\r") for row in text.split("\n")], "\r\n" if "\r\n" in text else "\n"


def rejoined(data: bytes, reader: Reader, words: SymptomWords) -> bytes:
    """A paste with the rows of every message it broke joined back (see :func:`spanning_joins`); the data as it
    is when there are none, or when it has more than :data:`MAX_ROWS` rows."""
    rows, end = rows_of(data)
    if len(rows) > MAX_ROWS:
        return data
    joins = spanning_joins(rows, reader, words)
    if not joins:
        return data
    return end.join(joined(rows, joins, words)).encode("utf-8", "surrogateescape")
