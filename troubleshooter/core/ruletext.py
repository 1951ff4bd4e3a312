"""Rule text (a finding's title, why, fix, commands; a check's detail and vars): sandboxed Jinja under budgets.

Rule directories are shared between jobs, so a template must not hang or exhaust a diagnosis.
Every render gets a budget: operations (loop iterations, calls, filter applications), characters
produced, and wall time. Loops are rewritten to draw from a counting iterator, filters are wrapped,
``*``/``**``/``%`` are checked before they allocate, and filters whose size arguments can allocate
without bound (``center``, ``indent``, ``batch``, ...) are not offered. A render over budget raises
:class:`TemplateBudgetExceeded`; :func:`render_text` then falls back to rendering each
expression on its own (``?`` for those that fail).
:func:`template_problem` is the load-time check ``rules check`` and ``--rules`` overlays get:
syntax, forbidden tags (macros, imports) and a trial render with no facts.
"""

from __future__ import annotations

import functools
import re
import time
from functools import lru_cache
from contextvars import ContextVar
from typing import Any, Callable, Iterable, Iterator, Mapping

from jinja2 import Template, TemplateSyntaxError, nodes
from jinja2.filters import make_attrgetter, pass_environment
from jinja2.sandbox import SandboxedEnvironment

MAX_OPS = 20_000
MAX_CHARS = 200_000  # characters produced by one render, intermediate strings included
MAX_SECONDS = 0.1
MAX_INT_BITS = 4096
FORBIDDEN_TAGS = (nodes.Macro, nodes.CallBlock, nodes.Import, nodes.FromImport, nodes.Include, nodes.Extends,
                  nodes.FilterBlock)
# Filters with size arguments that allocate before any check could run, or that are random.
UNOFFERED_FILTERS = ("batch", "center", "indent", "random", "slice", "wordwrap", "urlize", "filesizeformat", "xmlattr")
_EXPRESSION = re.compile(r"\{\{.*?\}\}", re.S)
_BLOCK = re.compile(r"\{%.*?%\}", re.S)
_WIDE_FORMAT = re.compile(r"%[-+ #0]*(\d{4,}|\*)|\.\d{4,}|\{[^}]*:[^}]*(\d{4,}|\{)")  # %9999d, %*d, {:9999}, {:{}}


class TemplateBudgetExceeded(Exception):
    """A rule template needed more operations, characters or time than one render may use."""


class _Budget:
    __slots__ = ("ops", "chars", "deadline")

    def __init__(self) -> None:
        self.ops, self.chars, self.deadline = MAX_OPS, MAX_CHARS, time.monotonic() + MAX_SECONDS

    def spend(self, ops: int = 1, chars: int = 0) -> None:
        self.ops -= ops
        self.chars -= chars
        if self.ops < 0:
            raise TemplateBudgetExceeded(f"more than {MAX_OPS:,} operations (loop iterations, calls, filters)")
        if self.chars < 0:
            raise TemplateBudgetExceeded(f"more than {MAX_CHARS:,} characters produced")
        if time.monotonic() > self.deadline:
            raise TemplateBudgetExceeded(f"more than {MAX_SECONDS} s")


_BUDGET: ContextVar[_Budget | None] = ContextVar("rule_template_budget", default=None)


def _spend(ops: int = 1, chars: int = 0) -> None:
    budget = _BUDGET.get()
    if budget is not None:
        budget.spend(ops, chars)


def _account(value: Any) -> Any:
    """Charge what a value costs (its characters or items); lazy sequences are charged per item."""
    if isinstance(value, str):
        _spend(1, len(value))
    elif isinstance(value, (list, tuple, dict, set)):
        _spend(1 + len(value))
    elif isinstance(value, Iterator):
        return _counted(value)
    return value


def _counted(items: Iterable) -> Iterator:
    for item in items:
        _spend(1, len(item) if isinstance(item, str) else 0)
        yield item


def _guard(func: Callable) -> Callable:
    @functools.wraps(func)  # keeps jinja's pass_context/pass_environment marker
    def guarded(*args: Any, **kwargs: Any) -> Any:
        _spend()
        return _account(func(*args, **kwargs))
    return guarded


@pass_environment
def _join(environment: SandboxedEnvironment, value: Iterable, d: str = "", attribute: Any = None) -> str:
    """``join`` that stops as soon as the budget is spent instead of building the whole string first."""
    get = make_attrgetter(environment, attribute) if attribute is not None else None
    parts = []
    for item in value:
        text = str(get(item) if get else item)
        _spend(1, len(text) + len(d))
        parts.append(text)
    return str(d).join(parts)


def _format(value: Any, *args: Any, **kwargs: Any) -> str:
    """``format`` (printf style) refusing field widths that would allocate before any check."""
    if _WIDE_FORMAT.search(str(value)):
        raise TemplateBudgetExceeded("a format width or precision of 4+ digits")
    return str(value) % (kwargs or args)


def _replace(value: Any, old: str, new: str, count: int | None = None) -> str:
    text, old, new = str(value), str(old), str(new)
    hits = text.count(old) if old else len(text) + 1
    _spend(1, len(text) + max(0, len(new) - len(old)) * min(hits, count if count is not None and count >= 0 else hits))
    return text.replace(old, new, -1 if count is None else count)


class _RuleTextEnvironment(SandboxedEnvironment):
    """The sandbox with budgets: loops count, calls count, arithmetic that allocates is checked first."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - jinja's signature
        _spend()
        return _account(super().call(__context, __obj, *args, **kwargs))

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _spend()
        if operator == "**" and isinstance(left, int) and isinstance(right, int) and \
                right > 0 and max(1, left.bit_length()) * right > MAX_INT_BITS:
            raise TemplateBudgetExceeded(f"an integer power beyond {MAX_INT_BITS} bits")
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(times, int) and isinstance(seq, (str, list, tuple)):
                    size = len(seq) * max(0, times)  # charged before Python allocates it
                    _spend(1, size) if isinstance(seq, str) else _spend(size)
            if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise TemplateBudgetExceeded(f"an integer product beyond {MAX_INT_BITS} bits")
        if operator == "%" and isinstance(left, str) and _WIDE_FORMAT.search(left):
            raise TemplateBudgetExceeded("a format width or precision of 4+ digits")
        return _account(super().call_binop(context, operator, left, right))

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """``'...'.format(...)`` is checked for huge or computed field widths before it runs."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        if _WIDE_FORMAT.search(str(value.__self__)):
            raise TemplateBudgetExceeded("a format width or precision of 4+ digits")
        return wrapped

    def counted(self, iterable: Any) -> Iterator:
        """What every ``{% for %}`` iterates: the loop's items, one operation each."""
        return _counted(iterable)

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Call(nodes.EnvironmentAttribute("counted"), [loop.iter], [], None, None,
                                   lineno=loop.lineno)
        return tree


def _environment() -> _RuleTextEnvironment:
    env = _RuleTextEnvironment(autoescape=False, trim_blocks=True, lstrip_blocks=True)
    env.globals = {"range": env.globals["range"], "dict": dict}
    filters = {name: f for name, f in env.filters.items() if name not in UNOFFERED_FILTERS}
    filters.update(join=_join, format=_format, replace=_replace)
    env.filters = {name: (f if name in ("join",) else _guard(f)) for name, f in filters.items()}
    return env


_ENV = _environment()


@lru_cache(maxsize=2048)
def _compiled(template: str) -> Template:
    return _ENV.from_string(template)


def render(template: str, context: Mapping[str, Any]) -> str:
    """Render rule text within the budget; raise TemplateBudgetExceeded or the template's own error."""
    if "{" not in template:  # no Jinja syntax: nothing to render
        return template
    token = _BUDGET.set(_Budget())
    try:
        out = []
        for chunk in _compiled(template).generate(**context):
            _spend(1, len(chunk))
            out.append(chunk)
        return "".join(out)
    finally:
        _BUDGET.reset(token)


def render_text(template: str, context: Mapping[str, Any]) -> str:
    """Render rule text; never raises and never shows Jinja to the reader.

    When the whole template fails (a fact missing under a filter, the budget spent), each
    ``{{ … }}`` is rendered on its own and the ones that fail read ``?``; tags are dropped.
    The fallback shares one deadline, so a template of many failing parts stays bounded.
    """
    try:
        return render(template, context).strip()
    except Exception:  # rule text must never crash a diagnosis
        pass
    deadline = time.monotonic() + 2 * MAX_SECONDS

    def one(match: re.Match) -> str:
        if time.monotonic() > deadline:
            return "?"
        try:
            return render(match.group(0), context)
        except Exception:
            return "?"
    text = _EXPRESSION.sub(one, template)
    try:
        return render(text, context).strip()
    except Exception:
        return _BLOCK.sub("", text).strip()


def template_problem(template: str) -> tuple[int, str] | None:
    """(line within the template, why) when rule text cannot be offered, else None.

    Syntax errors, tags rule text has no use for (macros, imports, includes), and templates that
    exceed the budget when rendered with no facts at all (constant loops such as nested ``range``).
    """
    if "{" not in template:
        return None
    try:
        tree = _ENV.parse(template)
        for tag in FORBIDDEN_TAGS:
            found = next(tree.find_all(tag), None)
            if found is not None:
                return found.lineno, f"`{type(found).__name__}` is not allowed in rule text"
        _compiled(template)  # unknown filters and tests are found when compiling
    except TemplateSyntaxError as exc:
        return exc.lineno or 1, f"template error: {exc.message}"
    try:
        render(template, {"facts": {}, "evidence": [], "hit": {}, "ranks": [], "first": None, "rank": None})
    except TemplateBudgetExceeded as exc:
        return 1, f"template exceeds the rendering budget: {exc}"
    except RecursionError:
        return 1, "template recurses without bound"
    except Exception:  # noqa: BLE001 - other errors depend on facts that are absent here
        pass
    return None

