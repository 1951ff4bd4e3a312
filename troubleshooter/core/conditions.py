"""The declarative condition language of the rules (never ``eval``).

A condition is one of::

    {all: [cond, ...]}   {any: [cond, ...]}   {not: cond}
    {fact: KEY, op: OP, value: V}     {fact: KEY, op: OP, ref: OTHER_KEY}
    {fact: KEY, op: exists|missing|nonempty|empty|is_true|is_false}
    {finding: FINDING_ID}             # that finding is present

Evaluation is three-valued: a comparison on an absent fact is *unknown* (None),
so ``not`` of it stays unknown and a rule only fires on a definite True.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator, Mapping

from troubleshooter.core.saferegex import regex_problem
from troubleshooter.core.yamlspan import SpanDict

Unknown = None


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _cmp(fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool | None]:
    def op(a: Any, b: Any) -> bool | None:
        if not (_num(a) and _num(b)):
            return None
        return fn(a, b)
    return op


def _contains(a: Any, b: Any) -> bool | None:
    if isinstance(a, (list, tuple, str, dict)):
        return b in a
    return None


def _matches(a: Any, b: Any) -> bool | None:
    if not isinstance(a, str):
        return None
    return re.search(b, a) is not None


def _in(a: Any, b: Any) -> bool | None:
    return a in b if isinstance(b, (list, tuple, str)) else None


BINARY_OPS: dict[str, Callable[[Any, Any], bool | None]] = {
    "equals": lambda a, b: a == b,
    "not_equals": lambda a, b: a != b,
    "lt": _cmp(lambda a, b: a < b),
    "le": _cmp(lambda a, b: a <= b),
    "gt": _cmp(lambda a, b: a > b),
    "ge": _cmp(lambda a, b: a >= b),
    "in": _in,
    "not_in": lambda a, b: None if _in(a, b) is None else not _in(a, b),
    "contains": _contains,
    "matches": _matches,
}

UNARY_OPS: dict[str, Callable[[Any], bool | None]] = {
    "nonempty": lambda a: bool(a) if isinstance(a, (list, tuple, dict, str)) else None,
    "empty": lambda a: not a if isinstance(a, (list, tuple, dict, str)) else None,
    "is_true": lambda a: a is True,
    "is_false": lambda a: a is False,
}

PRESENCE_OPS = ("exists", "missing")
ALL_OPS = sorted([*BINARY_OPS, *UNARY_OPS, *PRESENCE_OPS])


def validate(cond: Any, where: str = "when", line: int | None = None) -> Iterator[tuple[str, int | None, str, str]]:
    """Yield (message, line, breadcrumb, help) for every problem in ``cond`` (``line``: fallback location)."""
    line = getattr(cond, "line", None) or line
    if not isinstance(cond, dict):
        yield (f"a condition must be a mapping, got {type(cond).__name__}", line, where,
               "use {all: [...]}, {any: [...]}, {not: ...}, {fact: KEY, op: OP, value: V} or {finding: ID}")
        return
    verbs = [k for k in ("all", "any", "not", "fact", "finding") if k in cond]
    if len(verbs) != 1:
        yield ("a condition needs exactly one of all / any / not / fact / finding"
               + (f", found {verbs}" if verbs else f", found keys {sorted(cond)}"), line, where, "")
        return
    verb = verbs[0]
    key_line = cond.line_of(verb) if isinstance(cond, SpanDict) else line
    if verb in ("all", "any"):
        items = cond[verb]
        if not isinstance(items, list) or not items:
            yield (f"'{verb}' expects a non-empty list of conditions", key_line, where, "")
            return
        for i, item in enumerate(items):
            item_line = items.line_of(i) if hasattr(items, "line_of") else key_line
            yield from validate(item, f"{where} › {verb}[{i}]", item_line)
        extra = set(cond) - {verb}
    elif verb == "not":
        yield from validate(cond["not"], f"{where} › not", key_line)
        extra = set(cond) - {"not"}
    elif verb == "finding":
        if not isinstance(cond["finding"], str):
            yield ("'finding' expects a finding id", key_line, where, "")
        extra = set(cond) - {"finding"}
    else:
        extra = set(cond) - {"fact", "op", "value", "ref"}
        if not isinstance(cond["fact"], str):
            yield ("'fact' expects a fact key such as env.world_size", key_line, where, "")
        op = cond.get("op")
        if op not in ALL_OPS:
            yield (f"unknown op {op!r}", cond.line_of("op") if isinstance(cond, SpanDict) else line, where,
                   f"expected one of: {', '.join(ALL_OPS)}")
        elif op in BINARY_OPS:
            if ("value" in cond) == ("ref" in cond):
                yield (f"op {op!r} needs exactly one of 'value' or 'ref'", line, where, "")
            if op == "matches" and isinstance(cond.get("value"), str):
                problem = regex_problem(cond["value"])
                if problem:
                    yield (problem, cond.line_of("value"), where, "")
        elif "value" in cond or "ref" in cond:
            yield (f"op {op!r} takes no 'value' or 'ref'", line, where, "")
    if extra:
        yield (f"unexpected key(s) {sorted(extra)} in a '{verb}' condition", line, where, "")


def facts_read(cond: Any) -> Iterator[tuple[str, int | None]]:
    """Every fact key a condition reads, with its line."""
    if not isinstance(cond, dict):
        return
    for verb in ("all", "any"):
        for item in cond.get(verb) or []:
            yield from facts_read(item)
    if "not" in cond:
        yield from facts_read(cond["not"])
    if isinstance(cond.get("fact"), str):
        yield cond["fact"], getattr(cond, "line", None)
    if isinstance(cond.get("ref"), str):
        yield cond["ref"], getattr(cond, "line", None)


def findings_read(cond: Any) -> Iterator[str]:
    """Every finding id a condition refers to."""
    if not isinstance(cond, dict):
        return
    for verb in ("all", "any"):
        for item in cond.get(verb) or []:
            yield from findings_read(item)
    if "not" in cond:
        yield from findings_read(cond["not"])
    if isinstance(cond.get("finding"), str):
        yield cond["finding"]


def evaluate(cond: Mapping[str, Any], facts: Mapping[str, Any], findings: frozenset[str] = frozenset()) -> bool | None:
    """Evaluate a validated condition: True, False, or None (unknown)."""
    if "all" in cond:
        results = [evaluate(c, facts, findings) for c in cond["all"]]
        if any(r is False for r in results):
            return False
        return None if any(r is None for r in results) else True
    if "any" in cond:
        results = [evaluate(c, facts, findings) for c in cond["any"]]
        if any(r is True for r in results):
            return True
        return None if any(r is None for r in results) else False
    if "not" in cond:
        inner = evaluate(cond["not"], facts, findings)
        return None if inner is None else not inner
    if "finding" in cond:
        return cond["finding"] in findings
    key, op = cond["fact"], cond["op"]
    if op == "exists":
        return key in facts
    if op == "missing":
        return key not in facts
    if key not in facts:
        return Unknown
    value = facts[key]
    if op in UNARY_OPS:
        return UNARY_OPS[op](value)
    if "ref" in cond:
        if cond["ref"] not in facts:
            return Unknown
        other = facts[cond["ref"]]
    else:
        other = cond["value"]
    try:
        return BINARY_OPS[op](value, other)
    except TypeError:
        return Unknown
