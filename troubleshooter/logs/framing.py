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
  rows are joined back (see :func:`reflowed` for the rows broken after a colon or inside a frame, and
  for a lone broken row). The cap is the longest row with a space (:func:`reflow_cap`: a row of one word
  too long to break does not hide it). A re-flow at 80 columns may leave no row longer than 40-79
  characters, where programs wrap their own paragraphs too (Open MPI's help texts at 74-78 columns):
  under a cap narrower than 80 only a line that begins as a program's line does or tells a failure
  (``failure_words``) is joined; paragraphs of plain prose stay apart. When a re-flow broke rows shorter
  than its cap, it alone is undone: a row that happens to reach the cap is not a terminal's cut.

- A message broken where no row's shape shows it (a two-row excerpt, a next row that begins like a line of its
  own, a cut inside a word at no common width) is joined back when a signature matches its rows joined and none
  of them alone (:mod:`troubleshooter.logs.spanning`), after the shapes are read.

- A forum's typographer (Discourse outside a code block) curls a paste's quotes and turns ``--`` and ``...``
  into dashes and an ellipsis (``argument #3 ‘weight’``): in a paste the ASCII is put back (``typography``).
- A log collector's JSON lines (Docker's json-file driver ``{"log":"...\\n","stream":"stderr",...}``, Fluent Bit,
  ``journalctl -o json``, Cloud Logging) hold each line JSON-escaped in one field (``json_log_fields``): a chunk
  that begins with ``{`` has every such line replaced by the field's text (a value holding several lines gives
  them all).

- A per-line prefix no wording knows (a tool's own time, job and worker fields) hides where tracebacks
  begin: in a paste, what stands before a traceback's header or frame or an exception is taken as the
  prefix's shape when it begins most rows, and removed (:func:`unknown_prefix`).

The text is decoded once (:func:`repair`); hard wraps and re-flows are found on its rows. What starts a
line of its own (never joined to the row before) and how a row shows it is whole are knowledge:
``own_line_starts``, ``own_line_after_word``, ``failure_starts``, ``failure_words``, ``line_ends``, ``clause_ends``, ``goes_on``, ``banner_end``,
``whole_frame`` and ``terminal_widths`` of ``rules/symptoms.yaml``; this module is the mechanism.
"""

from __future__ import annotations

import json
import re

from troubleshooter.logs.lineprefix import may_carry_timestamp, split_prefix
from troubleshooter.logs.spanning import Reader, rejoined
from troubleshooter.logs.symptomwords import SymptomWords, shipped_words

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]")
MIN_PREFIXED_ROWS = 3      # rows an unknown prefix must begin before it is taken for one
PREFIX_ROWS = 400          # the first non-empty rows of a paste an unknown prefix is looked for on
PREFIX_CHARS = 80          # the longest unknown prefix looked for
PASTE_BYTES = 1 << 20      # a log read in one piece this small is a paste: wrapping is looked for
MIN_WRAP_WIDTH = 60        # narrower "widths" are short lines by chance
MIN_WRAPPED_LINES = 3      # distinct lines of exactly the width before it counts as a hard wrap
START_CHARS = 6           # characters that tell how a line begins
MIN_REFLOW_WIDTH = 80      # programs wrap their own paragraphs narrower (Open MPI's help texts at 74 columns)
NARROW_REFLOW_WIDTH = 40   # a re-flow at 80 columns may leave no row longer than this (the next word a long path)
JSON_PROBE_BYTES = 1 << 16  # where a chunk of a collector's JSON lines shows one beginning
MIN_REFLOWED_LINES = 2    # rows broken at a word boundary before a re-flow counts (the longest line is one by itself)


# IPython's frame rows: ``File ~/x.py:12, in f(a, b)`` (the arguments optional)
_IPYTHON_FRAME = re.compile(rb"^(?P<indent>[ \t]*)File (?P<path>[^\s\"]\S*?):(?P<line>\d+), in (?P<func>[^\s(]+)(?:\(.*\))?[ \t]*(?=\r?$)",
                            re.M)


def strip_ansi(data: bytes) -> bytes:
    """``data`` without ANSI escape sequences (returned unchanged, not copied, when it holds no ESC)."""
    return _ANSI.sub(b"", data) if b"\x1b" in data else data


def untypeset(data: bytes, words: SymptomWords) -> bytes:
    """``data`` with a typographer's characters (``typography``) back as the ASCII they stand for."""
    return words.typography.sub(lambda m: words.typography_ascii[m.group(0)], data)


def json_unwrapped(data: bytes, words: SymptomWords) -> bytes:
    """``data`` with each JSON-object line that holds a string under one of ``json_log_fields`` replaced by
    that string (its final line end dropped); other lines, and a chunk with no line beginning with ``{`` near its
    start, as they are (a chunk may begin inside the line the chunk before it left unfinished)."""
    if not data.startswith(b"{") and b"\n{" not in data[:JSON_PROBE_BYTES]:
        return data
    fields = words.json_log_fields
    out = []
    changed = False
    for row in data.split(b"\n"):
        if row.startswith(b"{"):
            try:
                record = json.loads(row)
            except ValueError:
                record = None
            if isinstance(record, dict):
                text = next((record[key] for key in fields if isinstance(record.get(key), str)), None)
                if text is not None:
                    row = text.rstrip("\r\n").encode("utf-8", "surrogateescape")
                    changed = True
        out.append(row)
    return b"\n".join(out) if changed else data


def wrap_width(rows: list[str], words: SymptomWords) -> int | None:
    """The width ``rows`` were hard-wrapped at, if they were: the longest length, shared by at least
    :data:`MIN_WRAPPED_LINES` distinct rows each followed by a non-empty row, or by fewer when it is a
    common terminal width (``terminal_widths``)."""
    width = max(map(len, rows), default=0)
    if width < MIN_WRAP_WIDTH:
        return None
    cut = {row for row, nxt in zip(rows, rows[1:]) if len(row) == width and nxt.strip()}
    return width if len(cut) >= MIN_WRAPPED_LINES or cut and width in words.terminal_widths else None


def _continues(row: str, nxt: str, words: SymptomWords) -> bool:
    """``nxt`` reads as the rest of ``row``, not as a line of its own: it is not indented and starts no
    line of its own (``own_line_starts`` of ``rules/symptoms.yaml``), and ``row`` does not end in a colon
    unless ``nxt`` begins with the one space that followed it (a terminal's cut keeps the space)."""
    return not _own_line(nxt, words) and (not row.endswith(":") or nxt[:1] == " " and nxt[1:2] not in ("", " "))


def _own_line(row: str, words: SymptomWords) -> bool:
    """``row`` is indented or starts a line of its own (a traceback, an exception, a frame, a timestamp, a
    bracketed prefix: ``own_line_starts``)."""
    return row.startswith("  ") or bool(words.own_line.match(row.lstrip()))


def unwrapped(rows: list[str], words: SymptomWords | None = None, reader: Reader | None = None) -> list[str]:
    """``rows`` with the rows of lines a terminal hard-wrapped joined (see :func:`wrap_width`); the same list
    if none. Widths count characters (a terminal cuts a UTF-8 line by columns, not bytes). A row that starts
    a line of its own (:func:`_continues`, or it begins the way this log's lines begin) is never joined: a
    log's longest lines may share a length by chance, and fixed-format lines all have the same length.
    Joined-away rows stay as empty lines, so line numbers still point into the file as it is. A terminal cuts
    inside a word, so a row is joined as it is, unless a signature (``reader``) reads the two rows only
    with a space between them (the row reached the width by chance, at a word's end: :func:`seam`)."""
    words = words or shipped_words()
    width = wrap_width(rows, words)
    if width is None:
        return rows
    # how this log's lines begin (rows after a shorter row surely begin a line)
    starts = {row[:START_CHARS] for row, before in zip(rows, ["", *rows]) if len(before) != width}
    out: list[str] = []
    joined = 0  # rows joined into the line being built: each leaves an empty line after it
    for before, row in zip(["", *rows], rows):
        if out and out[-1] and len(before) == width and row.strip() and row[:START_CHARS] not in starts \
                and _continues(before, row, words) and not words.banner_end.search(before):
            out[-1] += seam(out[-1], row, "", reader) + row
            joined += 1
            continue
        out.extend([""] * joined)
        joined = 0
        out.append(row)
    out.extend([""] * joined)
    return out


def reflowed(rows: list[str], words: SymptomWords | None = None) -> set[int]:
    """The rows a forum or mail client broke at a word boundary: ``row`` ends where the first word of the
    row after it would not have fitted under the longest row's length (the cap a re-flow leaves), the
    row after starts no line of its own (:func:`_continues`) and does not begin the way this log's
    other lines begin. Returns the indices of the rows to join to the next one (with the space the
    break took).

    No row ending in a banner's run of ``*``/``=``/``-`` (``banner_end``) is broken. Two passes: the strict one
    also requires that ``row`` end no line (``line_ends``, ``clause_ends``) and not be a whole traceback frame's
    row (``whole_frame``) (followed by its source line); at
    least :data:`MIN_REFLOWED_LINES` such rows show that the log was re-flowed. Then the rows a re-flow
    broke after a colon or a semicolon, or inside a frame (``File "x.py",`` / ``line 12, in f``), or before
    a word too long for any row (``ImportError:`` / a long path), are joined too, unless the next row is
    indented. One strict row alone counts when the row after it begins in lower case or with an opening
    parenthesis (``goes_on``: a sentence going on: ``opcode 1,`` / ``len 0``, ``:29500`` / ``(errno: 110 ...)``),
    when it is a traceback frame's row that is not whole (``File "x.py", line 12,`` / ``in f``), or when a
    row ending in a colon is followed by one word too long to have fitted (``undefined symbol:`` / a
    mangled C++ name) or by a row going on in lower case (``...so:`` / ``undefined symbol: _ZN...``). A lone
    row is not joined to a row whose first word is as long as the longest row, unless that is no wider than
    a screen (``terminal_widths``): a re-flow's cap is a screen's width, not a 5000-character line's."""
    width = reflow_cap(rows)
    if width < NARROW_REFLOW_WIDTH:
        return set()
    words = words or shipped_words()
    joins = _reflow_joins(rows, width, words)
    if width >= MIN_REFLOW_WIDTH:
        return joins
    return {i for i in joins if _machine_line(_chain(i, rows, joins), words)}


def _chain(index: int, rows: list[str], joins: set[int]) -> list[str]:
    """The rows of the line whose row ``index`` is joined to the next (from its first row to its last)."""
    first = last = index
    while first - 1 in joins:
        first -= 1
    while last in joins:
        last += 1
    return rows[first:last + 1]


def _machine_line(chain: list[str], words: SymptomWords) -> bool:
    """The line of rows ``chain`` begins the way a program's line does (a traceback, an exception, a tool's
    ``name: ``, a known prefix such as a rank label or a time) or tells a failure (``failure_starts``,
    ``failure_words``), not a
    paragraph of prose a program wrapped itself."""
    head = chain[0].lstrip()
    return bool(words.own_line.match(head) or words.own_line_after_word.match(head)
                or any(words.failure_start.search(row) or words.failure_words.search(row) for row in chain)) \
        or known_prefixes_end(chain[0], words) > 0


def _reflow_joins(rows: list[str], width: int, words: SymptomWords) -> set[int]:
    """The rows :func:`reflowed` joins in a paste whose cap is ``width``, before the narrow cap's check."""
    banner_end, whole_frame = words.banner_end.search, words.whole_frame.match

    def cut(row: str, nxt: str, one_word: bool = False) -> bool:  # the next row's first word would not have fitted
        spaced = " " in row.strip()  # a row with a space longer than the cap was not left by the re-flow
        return (spaced or one_word and bool(row.strip())) and (len(row) <= width or not spaced) and bool(nxt) \
            and len(row) + 1 + len(nxt.split(" ", 1)[0]) > width \
            and not banner_end(row) and not whole_frame(_body(row, words))

    def strict(row: str, nxt: str) -> bool:
        head = _body(row, words)
        if head.startswith("File"):  # a whole frame row is followed by its source line; a cut one goes on
            return bool(nxt) and not whole_frame(head) and len(row) + 1 + len(nxt.split(" ", 1)[0]) > width
        return cut(row, nxt) and not row.endswith(words.line_or_clause_ends)

    def joins_by(breaks, continues) -> set[int]:
        starts = {row[:START_CHARS] for row, before in zip(rows, ["", *rows]) if not breaks(before, row)}
        return {i for i, (row, nxt) in enumerate(zip(rows, rows[1:]))
                if breaks(row, nxt) and nxt[:START_CHARS] not in starts and continues(row, nxt)
                and not words.own_line_after_word.match(nxt)}

    def goes_on(row: str, nxt: str) -> bool:  # in a log known to be re-flowed a colon ends no line by itself
        return not _own_line(nxt, words)

    joins = joins_by(strict, lambda row, nxt: _continues(row, nxt, words))
    if len(joins) >= MIN_REFLOWED_LINES:
        return joins | joins_by(lambda row, nxt: cut(row, nxt, True) and not row.endswith(words.line_ends),
                                goes_on)
    lone = joins | {i for i in joins_by(lambda row, nxt: cut(row, nxt, True) and row.endswith(":"), goes_on)
                    if " " not in rows[i + 1].strip() or rows[i + 1][:1].islower()}
    longest_word_fits = max(map(len, rows)) <= max(words.terminal_widths)  # a re-flow's cap is a screen's width
    return {i for i in lone if (len(rows[i + 1].split(" ", 1)[0]) < width or longest_word_fits)  # not a huge line
            and (rows[i + 1][:1].islower() or rows[i + 1].startswith(words.goes_on)
                 or _body(rows[i], words).startswith("File") or rows[i].endswith(":"))}


def reflow_cap(rows: list[str]) -> int:
    """The cap a re-flow would have left: the longest row that holds a space after a first word shorter than
    :data:`MIN_WRAP_WIDTH` (a re-flow leaves a longer row only for a word it cannot break)."""
    return max((len(row) for row in rows if len(row.split(None, 1)) == 2 and len(row.split(None, 1)[0]) < MIN_WRAP_WIDTH),
               default=0)


def _body(row: str, words: SymptomWords) -> str:
    """``row`` after its known prefixes (a rank label, a time) and its indentation: what a frame or a line's
    first word is read on."""
    return row[known_prefixes_end(row, words):].lstrip() if row[:1] not in (" ", "\t", "") else row.lstrip()


def seam(text: str, row: str, usual: str, reader: Reader | None) -> str:
    """What goes between ``text`` and the ``row`` joined to it: ``usual`` (none after a terminal's cut, a space
    after a re-flow's break), or the other when only with it a signature (``reader``) reads the two as one
    message (a row that ends at the width by chance ends a word; a re-flowed row a terminal cut inside a word)."""
    if reader is None:
        return usual
    other = "" if usual else " "
    return other if reader.matching(text + other + row) - reader.matching(text + usual + row) else usual


def unflowed(rows: list[str], joins: set[int], reader: Reader | None = None) -> list[str]:
    """``rows`` with each row of ``joins`` joined to the next one (with the space the break took, see
    :func:`seam`); joined-away rows stay as empty lines, so line numbers still point into the file as it is."""
    out: list[str] = []
    joined = 0
    for i, row in enumerate(rows):
        if i - 1 in joins:
            out[-1] += seam(out[-1], row, " ", reader) + row
            joined += 1
        else:
            out.extend([""] * joined)
            joined = 0
            out.append(row)
    out.extend([""] * joined)
    return out


def repair(data: bytes, whole: bool, words: SymptomWords | None = None, reader: Reader | None = None) -> bytes:
    """The chunk as the program printed it: a collector's JSON lines decoded, colours removed; when ``whole``
    (the chunk is the entire log, small enough to be a paste), a typographer's characters put back, hard wrapping
    and a re-flow at word boundaries undone, then the rows of a message the paste broke where no shape showed it
    joined where a signature says so (``reader``, :mod:`troubleshooter.logs.spanning`), and IPython's frame rows
    written as CPython's. A re-flow
    that broke rows shorter than the longest one, at least one and at least as many as the rows of that length
    followed by another (a terminal's cuts), is undone alone: a row of that length is then one it left by chance, not a
    terminal's cut (joining it without the space the break took would glue two words)."""
    words = words or shipped_words()
    data = strip_ansi(json_unwrapped(data, words))
    if not whole or len(data) > PASTE_BYTES:
        return data
    data = unwrapped_paste(rich_frames(unprefixed(untypeset(data, words), words)), words, reader)
    if reader is not None:
        data = rejoined(data, reader, words)
    return cpython_frames(data)


def unknown_prefix(rows: list[str], words: SymptomWords) -> re.Pattern[str] | None:
    """The shape of a per-line prefix no ``line_prefixes`` wording peels, learnt from the paste itself: what
    stands, after the known prefixes a row begins with (a rank label stays), before a line of a failure (a
    traceback's header or frame, an exception, ``Killed``: ``failure_starts``) or a known prefix that tells a
    time, its digit runs read as any number, when it begins at least :data:`MIN_PREFIXED_ROWS` rows and
    half of the paste's first :data:`PREFIX_ROWS` non-empty rows (a tool's prefix on every line, not a message
    that holds an exception); the shape that begins the most rows wins. A paste of fewer rows (a one- or
    two-line excerpt) has its prefix learnt when one shape begins every row, ends in a separator (``|``,
    ``]``, ...), not in a word or a colon of the message (``Out of memory: Killed process``), and stands
    before an exception's ``Type:`` or a traceback's header. Heads are looked for up to
    :data:`PREFIX_CHARS` characters; the shape is matched where a row's known prefixes end."""
    filled = [row for row in rows if row.strip()][:PREFIX_ROWS]
    short = len(filled) < MIN_PREFIXED_ROWS
    need = len(filled) if short else max(MIN_PREFIXED_ROWS, (len(filled) + 1) // 2)
    best, most, tried, leads = None, 0, set(), None
    for row in filled:
        lead, head = _head(row, words)
        pattern = "".join(r"\d+" if part.isdigit() else re.escape(part) for part in re.split(r"(\d+)", head)) + r"[ \t]?"
        if not head or pattern in tried or short and not _stated_after(row[lead + len(head):], head, words):
            continue
        tried.add(pattern)
        shape = re.compile(pattern)
        leads = leads or [known_prefixes_end(other, words) for other in filled]
        count = sum(1 for other, at in zip(filled, leads) if shape.match(other, at))
        if count >= need and count > most:
            best, most = shape, count
    return best


def _stated_after(rest: str, head: str, words: SymptomWords) -> bool:
    """``head`` ends in a separator, not a word or a colon, and ``rest`` (what follows it) opens a traceback or
    states an exception (its type and a colon)."""
    if head[-1].isalnum() or head[-1] == ":":
        return False
    rest = rest.lstrip()
    start = words.failure_start.match(rest)
    return start is not None and (rest[start.end() - 1] == ":" or rest.startswith(":", start.end()))


def known_prefixes_end(row: str, words: SymptomWords) -> int:
    """Where the known prefixes ``row`` begins with end (0 when it begins with none)."""
    return len(row.rstrip()) - len(split_prefix(row, words=words).body)


def _head(row: str, words: SymptomWords) -> tuple[int, str]:
    """Where the known prefixes ``row`` begins with end, and what stands after them before the first place
    (after a space) where a line of a failure begins, or a known prefix that tells a time (a logger's or the
    launcher's stamp), known prefixes peeled there too (they are read line by line, with the rank or time
    they tell); the head is empty when one begins right there, or none does. (A known prefix that tells no
    time is no boundary: ``Epoch 10:`` reads like srun's label.)"""
    if not (words.failure_start.search(row, 1) or may_carry_timestamp(row)):
        return 0, ""
    lead = known_prefixes_end(row, words)
    for cut in range(lead, min(len(row), lead + PREFIX_CHARS + 1)):
        if cut > lead and not row[cut - 1].isspace():
            continue
        line = split_prefix(row[cut:], words=words)
        if words.failure_start.match(line.body):
            return lead, row[lead:cut].rstrip()
        if line.timestamp is not None:  # a message's progress before a time is no prefix (``Epoch 3/10 - <time>``)
            head = row[lead:cut].rstrip()
            told = head.encode("utf-8", "surrogateescape")
            return lead, "" if words.has_loss.search(told) or words.progress_line.match(told) else head
    return lead, ""


def unprefixed(data: bytes, words: SymptomWords) -> bytes:
    """A paste with an unknown per-line prefix (:func:`unknown_prefix`) removed from every row it begins
    after the row's known prefixes (the same rows, so line numbers still point into the file as it is)."""
    text = data.decode("utf-8", "surrogateescape")
    rows = text.split("\n")
    shape = unknown_prefix(rows, words)
    if shape is None:
        return data
    out = []
    for row in rows:
        lead = known_prefixes_end(row, words)
        match = shape.match(row, lead)
        out.append(row[:lead] + row[match.end():] if match else row)
    return "\n".join(out).encode("utf-8", "surrogateescape")


def unwrapped_paste(data: bytes, words: SymptomWords, reader: Reader | None = None) -> bytes:
    """A paste with its terminal's hard wrap or its re-flow undone (see :func:`repair`; ``reader`` picks the
    seams, :func:`seam`)."""
    text = data.decode("utf-8", "surrogateescape")
    rows = [row.rstrip("\r") for row in text.split("\n")]
    joins = reflowed(rows, words)
    width = max(map(len, rows), default=0)
    shorter = sum(len(rows[i]) < width for i in joins)  # rows a re-flow broke; a terminal cuts at its width
    at_width = sum(len(row) == width and bool(nxt.strip()) and not words.banner_end.search(row)
                   for row, nxt in zip(rows, rows[1:]))
    # a row at that length was broken at a word, not cut by a terminal, when it goes on a line a re-flow
    # broke shorter before it (``File`` / a long path at the cap / ``441, in save``), or when only the space a
    # re-flow took makes its frame whole (``..., line`` / ``487, in f``)
    framed = sum(len(rows[i]) == width and (any(len(row) < width for row in _chain(i, rows, joins)[:-1])
                                            or _whole_only_spaced(rows[i], rows[i + 1], words)) for i in joins)
    shorter, at_width = shorter + framed, at_width - framed
    if shorter < max(1, at_width):
        joined = unwrapped(rows, words, reader)
        if joined is not rows:
            rows, joins = joined, reflowed(joined, words)
        elif not joins:
            return data
    return ("\r\n" if "\r\n" in text else "\n").join(unflowed(rows, joins, reader)).encode("utf-8", "surrogateescape")


def _whole_only_spaced(row: str, nxt: str, words: SymptomWords) -> bool:
    """``row`` and ``nxt`` make a whole traceback frame row when joined with a space, not without one."""
    return bool(words.whole_frame.match(_body(row + " " + nxt, words))) \
        and not words.whole_frame.match(_body(row + nxt, words))


def cpython_frames(data: bytes) -> bytes:
    """``data`` with IPython's (>= 8) traceback frame rows (``File ~/x.py:12, in f(a, b)``) written as CPython
    writes them (``File "~/x.py", line 12, in f``), so that what reads a frame reads either (the data as it is
    when it holds none). A notebook cell's own row (``Cell In[3], line 5``) stays: it tells a notebook."""
    if b", in " not in data:
        return data
    return _IPYTHON_FRAME.sub(rb'\g<indent>File "\g<path>", line \g<line>, in \g<func>', data)


# rich's traceback box (``rich.traceback``, installed by accelerate's and typer's command lines): a header row
# ``╭──── Traceback (most recent call last) ────╮``, rows ``│ <content> │``, a footer ``╰────╯``; a frame's row is
# ``/path/x.py:240 in main``, the row of its line ``❱ 240 │   code``
_RICH_HEADER = re.compile(r"╭─+ Traceback \(most recent call last\) ─+╮")
_RICH_ROW = re.compile(r"│ ?(?P<content>.*?) *│$")
_RICH_FRAME = re.compile(r"(?P<path>\S.*?\.py[cw]?):(?P<line>\d+) in (?P<func>\S+)$")
_RICH_SOURCE = re.compile(r"❱ *\d+ │(?P<code>.*)$")


def rich_frames(data: bytes) -> bytes:
    """``data`` with each rich traceback box written as CPython writes a traceback: the header as
    ``Traceback (most recent call last):``, each frame's rows (its path wrapped over several rows, ``in`` and the
    function's name on the next row) as ``File "x.py", line 240, in main`` and its source line, at the end of the
    frame's rows (the footer's row is the last frame's), other rows of the box empty: the exception after the
    box ends the traceback, and line numbers still point into the box. The data as it is when it holds none."""
    if "╭".encode() not in data:
        return data
    rows = data.decode("utf-8", "surrogateescape").split("\n")
    for start, row in enumerate(rows):
        header = _RICH_HEADER.search(row)
        if header is None:
            continue
        lead = row[:header.start()]
        end = next((i for i in range(start + 1, len(rows)) if "╰" in rows[i]), None)
        if end is None:
            continue
        rows[start] = lead + "Traceback (most recent call last):"
        rows[start + 1:end + 1] = _rich_box(rows[start + 1:end + 1], lead)
    return "\n".join(rows).encode("utf-8", "surrogateescape")


def _rich_box(rows: list[str], lead: str) -> list[str]:
    """The rows of one box after its header (the footer last), written as CPython's frames (see
    :func:`rich_frames`)."""
    contents = [(_RICH_ROW.search(row[len(lead):]) or _RICH_ROW.search(row)) for row in rows]
    texts = [match.group("content").strip() if match else "" for match in contents]
    frames: list[tuple[int, str]] = []  # (first row, CPython's frame row)
    sources: dict[int, str] = {}  # frame index -> its source line
    piece, first = "", None
    for i, text in enumerate(texts):
        source = _RICH_SOURCE.match(text)
        if source and frames:
            sources[len(frames) - 1] = source.group("code").replace("│", " ").strip()
            piece, first = "", None
            continue
        if not text or " │" in text or text[:1].isdigit():
            piece, first = "", None
            continue
        piece, first = (piece + (" " if piece.endswith(" in") else "") + text, i if first is None else first)
        frame = _RICH_FRAME.match(piece)
        if frame:
            frames.append((first, f'  File "{frame.group("path")}", line {frame.group("line")}, in {frame.group("func")}'))
            piece, first = "", None
    if not frames:
        return rows
    out = [""] * len(rows)
    bounds = [at for at, _ in frames[1:]] + [len(rows)]
    for index, ((_, frame_row), bound) in enumerate(zip(frames, bounds)):
        out[bound - 2] = lead + frame_row
        out[bound - 1] = lead + "    " + sources.get(index, "")
    return out
