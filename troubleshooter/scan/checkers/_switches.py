"""Configuration switches: the value an ``if`` test takes in the run the script ships (its defaults)."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers._common import (
    config_default, local_callee, option_default, option_sites, resolved_const,
)
from troubleshooter.scan.model import CallSite, ModuleIndex, const, dotted


def switch_value(m: ModuleIndex, test: ast.AST, site: CallSite | None = None) -> bool | None:
    """True/False when ``test`` reads only switches whose default the file fixes (``not``, ``and``/``or`` of them):
    a ``store_true`` option, an option's or a configuration field's unchanged default, and - given the ``site`` whose
    function holds the test - a name that function binds to one literal, a module constant, or a parameter no call
    sets. None when it cannot tell."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        value = switch_value(m, test.operand, site)
        return None if value is None else not value
    if isinstance(test, ast.BoolOp):
        values = [switch_value(m, v, site) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # the value that decides: True for ``or``, False for ``and``
        if decisive in values:
            return decisive
        return (not decisive) if all(v is (not decisive) for v in values) else None
    name = dotted(test)
    if not name or site is None and "." not in name:
        return None
    found = _store_true_default(m, name)
    if found is None and site is not None:
        found = resolved_const(m, test, site, default=...)
    elif found is None:
        found = _unchanged_default(m, name)
    if site is not None and (found is ... or found is None and "." in name):
        found = _constant_binding(m, name, site)
    return None if found is ... else bool(found)


def _unchanged_default(m: ModuleIndex, name: str):
    """An option's or a configuration field's unchanged default (``...`` when there is none)."""
    default = option_default(m, name)
    if default is None:
        default = config_default(m, name)
    return ... if default is None else const(default, default=...)


def _store_true_default(m: ModuleIndex, name: str) -> bool | None:
    """``args.log_wandb`` from ``add_argument("--log-wandb", action="store_true")`` with no other default, when
    nothing in the file assigns that attribute: False."""
    switch = next((s for s in option_sites(m, name) if const(s.kw("action")) == "store_true"), None)
    return None if switch is None else bool(const(switch.kw("default"), default=False))


def _constant_binding(m: ModuleIndex, name: str, site: CallSite):
    """The literal a module-level name, or a parameter of the call's function that no call in the file passes,
    holds by default; ``...`` when not fixed."""
    bindings = m.bindings.get(name, ())
    if bindings and all(b.func is None for b in bindings):
        values = {repr(const(b.value, default=...)) for b in bindings}
        return const(bindings[0].value, default=...) if len(values) == 1 else ...
    func = site.ctx.func
    if bindings or func is None or "." in name:
        return ...
    args = func.node.args
    positional = args.posonlyargs + args.args
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(args.defaults):], args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    if name not in defaults or any(local_callee(m, c) is func for c in m.calls):
        return ...
    return const(defaults[name], default=...)
