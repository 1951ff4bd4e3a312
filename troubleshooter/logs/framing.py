"""Undo what a terminal or a paste did to a log's bytes before any line is read.

- ANSI colour and cursor codes (a log saved from a colour terminal, ``script``, CI consoles, Ray's
  coloured worker prefixes, Python 3.13's coloured tracebacks) split the words signatures anchor on:
  they are removed from a chunk that holds an ESC byte at all (one C-speed substitution, no per-line
  work; a chunk without ESC is returned as it is).
- Lines hard-wrapped at a terminal's width (copied from an 80- or 120-column terminal, a console that
  cuts long lines) split error messages in two: in a pasted log (one small read) whose longest rows
  share one length, each row of that length is joined to the next unless the next begins a line of
  its own. Joined-away rows stay as empty lines, so line numbers still point into the file as it is.
- A re-flow at word boundaries (a forum, a mail client) leaves rows no longer than a cap, each broken
  where the next word would not have fitted: in a paste with at least two such rows, whose next row
  starts no line of its own (a traceback, an exception, a frame, a prefix, a tool's ``name: ``, the
  shell's signal report) nor the way this log's lines begin, and which do not end a sentence, those
  rows are joined back, when that cap is at least 80 columns. Paragraphs programs wrap themselves
  (Open MPI's help texts at 74 columns) stay apart: their rows fall short of a longer log's longest
  line, and a log of nothing else is narrower than 80.
"""

from __future__ import annotations

import re

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]")
PASTE_BYTES = 1 << 20      # a log read in one piece this small is a paste: wrapping is looked for
MIN_WRAP_WIDTH = 60        # narrower "widths" are short lines by chance
MIN_WRAPPED_LINES = 3      # distinct lines of exactly the width before it counts as a hard wrap
START_CHARS = 6           # characters that tell how a line begins
MIN_REFLOW_WIDTH = 80      # programs wrap their own paragraphs narrower (Open MPI's help texts at 74 columns)
MIN_REFLOWED_LINES = 2    # rows broken at a word boundary before a re-flow counts (the longest line is one by itself)
SENTENCE_ENDS = (" ", ".", ":", ";", "!", "?")  # a row ending so is a whole line, not one a re-flow broke
TERMINAL_WIDTHS = frozenset((80, 100, 120, 132, 160, 200))  # where fewer such lines still suggest one
# a row that starts a line of its own (a traceback, an exception, a frame, a launcher or logger prefix)
_LINE_START = re.compile(r"(?:Traceback|File |[\w.]*(?:Error|Exception|Warning)\b|\["
                         r"|\d{4}-\d\d-\d\d|[IWEF]\d{4} |[=*-]{5})")
# what also starts a line of its own after a row a re-flow may have broken (not a terminal's cut, which can fall
# anywhere): a tool's or logger's "name: ", the shell's report of a signal
_OWN_LINE_AFTER_WORD = re.compile(r"[\w.-]+: |Segmentation fault|Bus error|Aborted|Killed")


def strip_ansi(data: bytes) -> bytes:
    """``data`` without ANSI escape sequences (returned unchanged, not copied, when it holds no ESC)."""
    return _ANSI.sub(b"", data) if b"\x1b" in data else data


def wrap_width(rows: list[str]) -> int | None:
    """The width ``rows`` were hard-wrapped at, if they were: the longest length, shared by at least
    :data:`MIN_WRAPPED_LINES` distinct rows each followed by a non-empty row, or by fewer when it is a
    common terminal width."""
    width = max(map(len, rows), default=0)
    if width < MIN_WRAP_WIDTH:
        return None
    cut = {row for row, nxt in zip(rows, rows[1:]) if len(row) == width and nxt.strip()}
    return width if len(cut) >= MIN_WRAPPED_LINES or cut and width in TERMINAL_WIDTHS else None


def _continues(row: str, nxt: str) -> bool:
    """``nxt`` reads as the rest of ``row``, not as a line of its own: it is not indented and starts no
    traceback, exception, frame, timestamp or bracketed prefix, and ``row`` does not end in a colon."""
    return not nxt.startswith("  ") and not _LINE_START.match(nxt.lstrip()) and not row.endswith(":")


def unwrap(data: bytes) -> bytes:
    """Join the rows of lines a terminal hard-wrapped (see :func:`wrap_width`); ``data`` unchanged if none.
    Widths count characters (a terminal cuts a UTF-8 line by columns, not bytes). A row that starts a
    line of its own (:func:`_continues`, or it begins the way this log's lines begin) is never joined: a
    log's longest lines may share a length by chance, and fixed-format lines all have the same length."""
    text = data.decode("utf-8", "surrogateescape")
    rows = [row.rstrip("\r") for row in text.split("\n")]
    width = wrap_width(rows)
    if width is None:
        return data
    # how this log's lines begin (rows after a shorter row surely begin a line)
    starts = {row[:START_CHARS] for row, before in zip(rows, ["", *rows]) if len(before) != width}
    out: list[str] = []
    joined = 0  # rows joined into the line being built: each leaves an empty line after it
    for before, row in zip(["", *rows], rows):
        if out and out[-1] and len(before) == width and row.strip() and row[:START_CHARS] not in starts \
                and _continues(before, row):
            out[-1] += row
            joined += 1
            continue
        out.extend([""] * joined)
        joined = 0
        out.append(row)
    out.extend([""] * joined)
    return ("\r\n" if "\r\n" in text else "\n").join(out).encode("utf-8", "surrogateescape")


def reflowed(rows: list[str]) -> set[int]:
    """The rows a forum or mail client broke at a word boundary: ``row`` ends where the first word of the
    row after it would not have fitted under the longest row's length (the cap a re-flow leaves), the
    row after starts no line of its own (:func:`_continues`) and does not begin the way this log's
    other lines begin. Returns the indices of the rows to join to the next one (with the space the
    break took)."""
    width = max(map(len, rows), default=0)
    if width < MIN_REFLOW_WIDTH:
        return set()

    def breaks(row: str, nxt: str) -> bool:  # a traceback frame's row is followed by its source line
        return " " in row.strip() and bool(nxt) and not row.endswith(SENTENCE_ENDS) and not row.lstrip().startswith("File ") \
            and len(row) + 1 + len(nxt.split(" ", 1)[0]) > width

    starts = {row[:START_CHARS] for row, before in zip(rows, ["", *rows]) if not breaks(before, row)}
    joins = {i for i, (row, nxt) in enumerate(zip(rows, rows[1:]))
             if breaks(row, nxt) and nxt[:START_CHARS] not in starts and _continues(row, nxt)
             and not _OWN_LINE_AFTER_WORD.match(nxt)}
    return joins if len(joins) >= MIN_REFLOWED_LINES else set()


def unflow(data: bytes) -> bytes:
    """Join the rows a re-flow at word boundaries broke (see :func:`reflowed`); ``data`` unchanged if none.
    Joined-away rows stay as empty lines, so line numbers still point into the file as it is."""
    text = data.decode("utf-8", "surrogateescape")
    rows = [row.rstrip("\r") for row in text.split("\n")]
    joins = reflowed(rows)
    if not joins:
        return data
    out: list[str] = []
    joined = 0
    for i, row in enumerate(rows):
        if i - 1 in joins:
            out[-1] += " " + row
            joined += 1
        else:
            out.extend([""] * joined)
            joined = 0
            out.append(row)
    out.extend([""] * joined)
    return ("\r\n" if "\r\n" in text else "\n").join(out).encode("utf-8", "surrogateescape")


def repair(data: bytes, whole: bool) -> bytes:
    """The chunk as the program printed it: colours removed; hard wrapping undone when ``whole`` (the
    chunk is the entire log, and small enough to be a paste)."""
    data = strip_ansi(data)
    if whole and len(data) <= PASTE_BYTES:
        data = unflow(unwrap(data))
    return data
