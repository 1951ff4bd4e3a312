"""Parsing a user's Python source without executing it and without printing the parser's warnings."""

from __future__ import annotations

import ast
import re
import symtable
import warnings


def parse_python(data: bytes | str, filename: str) -> ast.Module:
    """The module's tree; raises what ``ast.parse`` raises.

    The parser's own warnings about the user's code (an invalid escape such as ``"\\d"``: a DeprecationWarning
    before Python 3.12, a SyntaxWarning printed to stderr from 3.12) are not ours to print, and under
    ``-W error`` they would turn a valid file into "cannot parse".
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(data, filename=filename)


def compiles(data: bytes | str, filename: str) -> bool:
    """True when Python's parser accepts the source, checked without building the Python tree (its symbol table
    is built instead: about 40% cheaper than ``ast.parse``, and nothing to free). False means "not known": the
    source may still parse (the symbol table refuses more, ``nonlocal`` at module level for one), so the caller
    parses it to learn what ``ast.parse`` says. For a file nothing reads the tree of. (One case it accepts and
    ``ast.parse`` refuses: an expression nested to within a level of the interpreter's recursion budget, about
    3,000 deep, a limit that already moves with the caller's stack depth.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            symtable.symtable(data, filename, "exec")
        except Exception:  # SyntaxError, ValueError (a null byte), RecursionError, MemoryError: let ast.parse tell
            return False
    return True


# ``from pkg.mod `` (or ``from . ``, ``from .. a``) just before an ``import`` keyword, at the end of what precedes it
_FROM_CLAUSE = re.compile(rb"(?:^|(?<=[\s;:]))from(?!\w)[\w.\s\\]*$")
# blanks after a keyword, escaped line ends included
_GAP = re.compile(rb"(?:[ \t\x0c]|\\\r?\n)*")
# bytes that may continue a name (any non-ASCII byte may be part of one)
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") | frozenset(range(128, 256))
_BACKSLASH, _CR, _LF, _OPEN = 92, 13, 10, 40


def imports_in_bytes(data: bytes) -> list[tuple[str, int]] | None:
    """(module, level) of the module's import statements, read from its bytes without parsing it: every pair a walk
    of its statements would list (``from a import b`` -> ``a.b`` and ``a``; ``from . import b`` -> ``b``), and maybe
    more (a docstring line that reads like an import), never fewer. The source is taken to be valid Python (the
    caller checks its syntax). None when the bytes hold something this reading cannot be sure of (a lone carriage
    return ending a line, a comment line ending in a backslash before an import, a name that is not ASCII): parse
    then.

    Every import statement spells the keyword ``import``; an occurrence is taken for one when the text before it on
    its logical line is nothing, or ends a statement (``;``) or a compound header (``:``), once an optional
    ``from <module>`` is put aside. In a string or a comment the word follows other text (left out), or it reads
    like a statement (then it adds a pair: one more, not one fewer)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        return None
    out: list[tuple[str, int]] = []
    at = data.find(b"import")
    while at != -1:
        end = at + 6
        if not (at and data[at - 1] in _NAME_BYTES or end < len(data) and data[end] in _NAME_BYTES):
            found = _import_at(data, at, end)
            if found is None:
                return None
            out += found
        at = data.find(b"import", end)
    return out


def _import_at(data: bytes, at: int, end: int) -> list[tuple[str, int]] | None:
    """The pairs of the import statement whose keyword ``import`` spans ``at:end``; [] when no statement starts there
    (the word in a string or a comment); None when unsure."""
    start = data.rfind(b"\n", 0, at) + 1
    while _escaped(data, start - 1):  # the line continues an earlier one
        earlier = data.rfind(b"\n", 0, start - 1) + 1
        if b"#" in data[earlier:start]:
            return None  # a comment's backslash continues nothing: cannot tell without tokens
        start = earlier
    before = data[start:at]
    clause = _FROM_CLAUSE.search(before)
    head = before[:clause.start() if clause else len(before)].replace(b"\\\r\n", b"").replace(b"\\\n", b"").rstrip()
    if head and head[-1] not in b";:":
        return None if b"from" in head and not head.isascii() else []  # ``from <non-ASCII name>`` is unsure
    names = _names_after(data, _GAP.match(data, end).end(), end)
    if names is None or not names.isascii():
        return None
    imported = [_dotted(item) for item in names.split(b",")]
    if clause is None:
        return [(name, 0) for name in imported if name]
    module = b"".join(_tokens(before[clause.start() + 4:]))
    if not module.isascii():
        return None
    text = module.decode()
    stripped = text.lstrip(".")
    level = len(text) - len(stripped)
    found = [(f"{stripped}.{name}" if stripped else name, level) for name in imported if name]
    return found + [(stripped, level)] if stripped else found


def _names_after(data: bytes, first: int, end: int) -> bytes | None:
    """The text of the names an import statement lists: inside its parentheses (comments left out), else up to the
    end of its logical line, a ``;`` or a ``#``. None for parentheses that never close."""
    if first < len(data) and data[first] == _OPEN:
        parts, line_at = [], first + 1
        while True:
            newline = data.find(b"\n", line_at)
            line = data[line_at:newline if newline != -1 else len(data)]
            code = line.partition(b"#")[0]
            close = code.find(b")")
            if close != -1:
                parts.append(code[:close])
                return b"\n".join(parts)
            if newline == -1:
                return None
            parts.append(code)
            line_at = newline + 1
    stop = data.find(b"\n", end)
    while stop != -1 and _escaped(data, stop):
        stop = data.find(b"\n", stop + 1)
    names = data[end:stop if stop != -1 else len(data)]
    return names.partition(b";")[0].partition(b"#")[0]


def _escaped(data: bytes, newline: int) -> bool:
    """The line end at ``newline`` is escaped by a backslash (the logical line goes on)."""
    return newline >= 1 and (data[newline - 1] == _BACKSLASH or
                             newline >= 2 and data[newline - 1] == _CR and data[newline - 2] == _BACKSLASH)


def _tokens(text: bytes) -> list[bytes]:
    """The blank-separated pieces of ``text``, escaped line ends counted as blanks."""
    return text.replace(b"\\\r\n", b" ").replace(b"\\\n", b" ").split()


def _dotted(item: bytes) -> str:
    """The imported name of one item of an import list: ``a . b as c`` -> ``a.b``."""
    tokens = _tokens(item)
    if b"as" in tokens:
        tokens = tokens[:tokens.index(b"as")]
    return b"".join(tokens).decode()
