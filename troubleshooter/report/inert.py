"""Make user text inert before it reaches a terminal or a Markdown report.

Log lines, tracebacks, commands and stack frames are the user's (or an attacker's) text.
In a terminal their control characters (C0, C1, DEL, bidi overrides; ESC sequences that
retitle, clear or recolour, OSC-8 links, BEL) are shown as visible symbols instead of acting.
In Markdown, text is escaped (:func:`md_text`) or put in a code span/block whose fence is
longer than any backtick run inside (:func:`md_code`, :func:`md_block`), so it can raise no
HTML, link, image, heading or fence-closing. Rule Markdown with the user's values interpolated
(a finding's why and fix) keeps its structure, but every block where a value raised HTML, a link
or an image is escaped line by line (:func:`md_prose`). HTML is escaped by Jinja's autoescape.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.report.redact import MASK

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# the colour sequences the tool itself writes (SGR: ESC [ digits;... m), kept when colour is on
SGR = re.compile(r"\x1b\[[0-9;]{0,12}m")
_MD_ACTIVE = re.compile(r"([\\`*\[\]|]|^[#+=-](?=[\s#=-]|$)|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_ESCAPED_MASK = MASK.replace("*", "\\*")
_MD_LIST_NUMBER = re.compile(r"^(\d+)([.)])(?=\s|$)")


def _picture(match: re.Match) -> str:
    code = ord(match[0])
    if code < 0x20:
        return chr(0x2400 + code)  # ␛ ␇ ␍ ...
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\u{code:04x}" if code > 0xFF else f"\\x{code:02x}"


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab replaced by a visible stand-in."""
    return CONTROL.sub(_picture, text) if text else text


def visible_keeping_colour(text: str) -> str:
    """Like :func:`visible`, but the SGR colour sequences (the tool's own) stay."""
    parts = SGR.split(text)
    colours = SGR.findall(text)
    out = [visible(parts[0])]
    for colour, part in zip(colours, parts[1:]):
        out += [colour, visible(part)]
    return "".join(out)


def inert(obj: Any) -> Any:
    """A copy of a document with :func:`visible` applied to every string (keys too)."""
    if isinstance(obj, str):
        return visible(obj)
    if isinstance(obj, dict):
        return {inert(k): inert(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(inert(v) for v in obj)
    return obj


def md_text(value: Any) -> str:
    """One line of plain Markdown text: no HTML, links, images, emphasis, headings or table breaks."""
    text = " ".join(visible(str(value)).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_LIST_NUMBER.sub(r"\1\\\2", _MD_ACTIVE.sub(r"\\\1", text))
    return text.replace(_ESCAPED_MASK, MASK)  # the redaction mask renders as it reads


# what can only come from text, never from the rules' own Markdown (rules check finds none there)
_ACTIVE_TOKENS = frozenset({"html_block", "html_inline", "link_open", "image"})
_LINE_PREFIX = re.compile(r"^\s*(?:(?:[-*+]|\d{1,9}[.)]|>)\s+)*")  # indentation, list markers, quote marks


def md_prose(value: Any) -> str:
    """Rule Markdown (why, fix) holding the user's values: blocks that raise HTML, links or images are escaped.

    Code blocks and code spans stay as written; a paragraph, list item or HTML block in which a
    value produced a raw tag, a link, an autolink or an image is escaped line by line with
    :func:`md_text` (list and quote markers kept), until nothing active is left.
    """
    text = visible(str(value))
    if "<" not in text and "[" not in text:  # every active construct needs one of them
        return text
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": True})
    parser.validateLink = lambda url: True  # a link this parser would refuse (javascript:) is still a link elsewhere
    for _ in range(8):
        lines = text.split("\n")
        spans = {range(*t.map) for t in _active_blocks(parser.parse(text))}
        if not spans:
            return text
        for line in sorted({i for span in spans for i in span}):
            prefix = _LINE_PREFIX.match(lines[i := line])[0]
            lines[i] = prefix + md_text(lines[i][len(prefix):])
        text = "\n".join(lines)
    return "\n".join(md_text(line) for line in text.split("\n"))


def _active_blocks(tokens: list) -> list:
    """The block tokens (with their line map) that hold HTML, a link or an image."""
    out, block = [], None
    for token in tokens:
        if token.map is not None:
            block = token
        if token.type in _ACTIVE_TOKENS or any(child.type in _ACTIVE_TOKENS for child in token.children or ()):
            out.append(token if token.map is not None else block)
    return [t for t in out if t is not None]


def _fence_for(text: str, minimum: int) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(minimum, longest + 1)


def md_code(value: Any) -> str:
    """An inline code span holding ``value`` on one line, whatever backticks it contains."""
    text = " ".join(visible(str(value)).split())
    fence = _fence_for(text, 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(value: Any, lang: str = "") -> str:
    """A fenced code block holding ``value`` (no final newline), fenced longer than any backtick run."""
    text = visible(str(value)).rstrip("\n")
    fence = _fence_for(text, 3)
    return f"{fence}{lang}\n{text}\n{fence}"
