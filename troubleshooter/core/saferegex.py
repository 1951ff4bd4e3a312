"""Regular expressions from rule files, refused when they can backtrack catastrophically.

Python's ``re`` backtracks: ``(a+)+$`` on a line of 30 ``a`` and a ``b`` takes minutes. Rules
are shared between jobs, so every pattern a rule file declares (log signatures, scanner and
live patterns, ``matches`` conditions) is checked when it is loaded. The check reads the parsed
pattern and refuses the two shapes behind exponential backtracking:

- an unbounded repeat whose body has a part of variable length that nothing mandatory in the
  body separates from the next repetition (``(a+)+``, ``(\\w+\\s*)*``, ``(.*,)+``, ``(a|aa)+``);
  ``(\\d+\\.)+`` is fine: the mandatory ``.`` can never be eaten by ``\\d+``;
- an unbounded repeat over alternatives that match the same text (``(a|a)+``, ``(ab|ab)*``).

Possessive repeats and atomic groups never backtrack and are accepted.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

try:  # Python 3.11+
    from re import _constants as C, _parser as P
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

# Characters that stand for every class a pattern can name: ASCII plus a few non-ASCII letters, digits, spaces.
_ALPHABET = tuple(map(chr, range(128))) + ("\u00a0", "\u00e9", "\u0660", "\u4e00", "\u2028", "\U0001f600")
_ALL = frozenset(_ALPHABET)
_REPEATS = {C.MAX_REPEAT, C.MIN_REPEAT}
_NO_BACKTRACK = {getattr(C, "POSSESSIVE_REPEAT", None), getattr(C, "ATOMIC_GROUP", None)} - {None}
_BIG = 50  # a repeat allowing more than this many iterations counts as unbounded


@lru_cache(maxsize=4096)
def regex_problem(pattern: str, flags: int = 0) -> str | None:
    """Why ``pattern`` is refused (invalid, or catastrophic backtracking), or None when it is fine."""
    try:
        re.compile(pattern, flags)
        parsed = P.parse(pattern, flags)
    except (re.error, RecursionError, OverflowError) as exc:
        return f"bad regular expression: {exc}"
    ignore_case = bool((parsed.state.flags | flags) & re.IGNORECASE)
    found = _scan(parsed.state, list(parsed), ignore_case)
    if found:
        return (f"catastrophic backtracking: {found}; a line that almost matches takes exponential time "
                "(make the inner part unambiguous, e.g. `(\\w+\\s)+` instead of `(\\w+\\s*)+`, or use a "
                "possessive `++` / atomic `(?>...)` group)")
    return None


def _scan(state: Any, items: list, ignore_case: bool) -> str | None:
    for op, av in items:
        if op in _REPEATS:
            low, high, body = av
            body = list(body)
            if high == C.MAXREPEAT or high > _BIG:
                reason = _ambiguous(state, body, ignore_case)
                if reason:
                    return reason
            found = _scan(state, body, ignore_case)
        elif op is C.SUBPATTERN:
            found = _scan(state, list(av[-1]), ignore_case)
        elif op is C.BRANCH:
            found = next((r for alt in av[1] if (r := _scan(state, list(alt), ignore_case))), None)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            found = _scan(state, list(av[1]), ignore_case)
        elif op in _NO_BACKTRACK:  # never backtracks into itself, but what it holds may
            found = _scan(state, list(av if op is getattr(C, "ATOMIC_GROUP", None) else av[2]), ignore_case)
        elif op is C.GROUPREF_EXISTS:
            found = next((r for alt in av[1:] if alt is not None and (r := _scan(state, list(alt), ignore_case))), None)
        else:  # literals, classes, anchors
            found = None
        if found:
            return found
    return None


def _ambiguous(state: Any, body: list, ignore_case: bool) -> str | None:
    """Why one iteration of an unbounded repeat over ``body`` can be split in several ways, or None."""
    top = _flatten(body)
    for index, item in enumerate(top):
        low, high = _width(state, [item])
        if low == high or item[0] in _NO_BACKTRACK:
            continue
        eaten = _chars(state, [item], ignore_case)
        if not any(i != index and _min_width(state, [other]) > 0 and not (_chars(state, [other], ignore_case) & eaten)
                   for i, other in enumerate(top)):
            return ("a repeated group holds a part of variable length that nothing mandatory separates "
                    "from the next repetition")
    for op, av in top:
        if op is not C.BRANCH:
            continue
        shapes = [_fixed_shape(state, list(alt), ignore_case) for alt in av[1]]
        for i, first in enumerate(shapes):
            for second in shapes[i + 1:]:
                if (first is not None and second is not None and len(first) == len(second)
                        and all(a & b for a, b in zip(first, second))):
                    return "a repeated group offers two alternatives that match the same text"
    return None


def _flatten(items: list) -> list:
    """Top-level items of a sequence, looking through groups."""
    out = []
    for op, av in items:
        if op is C.SUBPATTERN:
            out.extend(_flatten(list(av[-1])))
        else:
            out.append((op, av))
    return out


def _fixed_shape(state: Any, items: list, ignore_case: bool) -> list | None:
    """Per-position character sets of a sequence of single characters, or None for anything else."""
    shape = []
    for op, av in _flatten(items):
        if op not in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
            return None
        shape.append(_chars(state, [(op, av)], ignore_case))
    return shape


def _min_width(state: Any, items: list) -> int:
    return P.SubPattern(state, list(items)).getwidth()[0]


def _width(state: Any, items: list) -> tuple[int, int]:
    return P.SubPattern(state, list(items)).getwidth()


def _chars(state: Any, items: list, ignore_case: bool) -> frozenset:
    """Every character the items may consume (over the sample alphabet)."""
    out: set = set()
    for op, av in items:
        if op is C.LITERAL:
            out |= _case({chr(av)}, ignore_case)
        elif op is C.NOT_LITERAL:
            out |= _ALL - _case({chr(av)}, ignore_case)
        elif op is C.ANY:
            out |= _ALL
        elif op is C.IN:
            out |= _class(av, ignore_case)
        elif op in _REPEATS or op is getattr(C, "POSSESSIVE_REPEAT", None):
            out |= _chars(state, list(av[2]), ignore_case)
        elif op is C.SUBPATTERN:
            out |= _chars(state, list(av[-1]), ignore_case)
        elif op is getattr(C, "ATOMIC_GROUP", None):
            out |= _chars(state, list(av), ignore_case)
        elif op is C.BRANCH:
            for alt in av[1]:
                out |= _chars(state, list(alt), ignore_case)
        elif op in (C.GROUPREF, C.GROUPREF_EXISTS):
            out |= _ALL
    return frozenset(out)


_CATEGORY_RX = {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_SPACE": r"\s",
                "CATEGORY_NOT_SPACE": r"\S", "CATEGORY_WORD": r"\w", "CATEGORY_NOT_WORD": r"\W"}


@lru_cache(maxsize=None)
def _category(name: str) -> frozenset:
    rx = re.compile(_CATEGORY_RX.get(name, r"[\s\S]"))
    return frozenset(c for c in _ALPHABET if rx.fullmatch(c))


def _class(members: list, ignore_case: bool) -> frozenset:
    out: set = set()
    negate = False
    for op, av in members:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            out |= _case({chr(av)}, ignore_case)
        elif op is C.RANGE:
            out |= _case({c for c in _ALPHABET if av[0] <= ord(c) <= av[1]}, ignore_case)
        elif op is C.CATEGORY:
            out |= _category(str(av))
    return _ALL - frozenset(out) if negate else frozenset(out)


def _case(chars: set, ignore_case: bool) -> set:
    return chars | {c.swapcase() for c in chars} if ignore_case else chars
