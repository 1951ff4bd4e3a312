"""Constant arguments applied to a callee's guards: which calls of a function a given call of it can reach.

``load_and_cache_examples(args, tok, evaluate=True)`` binds ``evaluate`` to True; in the callee, a call under
``if args.local_rank == 0 and not evaluate:`` (or after ``if evaluate: return ...``) is then never reached,
whatever the rank. Tests are read in three values (true, false, unknown): only a parameter bound to a literal
(passed, or the parameter's default when the call leaves it out) and never reassigned in the function is known,
and a name of a function or class the module defines (truthy: ``not evaluate`` where ``evaluate`` is the module's
own function, not a parameter, is always false).
"""

from __future__ import annotations

import ast

from troubleshooter.scan.guards import const, dotted, walk

UNKNOWN = object()
VARIANTS = 8  # the most bindings one call is read with (a local name holding one of several literals)


class Defined:
    """The value of a name bound to a module-level function or class: truthy, equal only to itself."""


DEFINED = Defined()
TERMINAL = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# Nodes path_tests reads part by part: a conditional expression adds its test, a nested scope's calls are not the
# function's own.
_SCOPES = frozenset({ast.IfExp, ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def bindings(func: ast.AST, call: ast.Call, outer: dict | None = None, is_method: bool = False,
             choices: dict | None = None) -> list[dict]:
    """The possible parameter bindings (name -> literal value) of a call of ``func``: literal arguments (positional
    or keyword), a caller's own bound parameter passed on by name (``outer``), a caller's local name that only ever
    holds literals (``choices``: one binding per value, at most ``VARIANTS``), and the defaults of the parameters
    left out. ``[{}]`` when the call unpacks ``*args`` / ``**kwargs`` (nothing is known then)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return [{}]
    args = func.args
    params = [a.arg for a in [*args.posonlyargs, *args.args]]
    if is_method and params and params[0] in ("self", "cls"):
        params = params[1:]
    out: dict = {}
    alternatives: dict[str, tuple] = {}

    def bind(name: str, node: ast.AST) -> None:
        if isinstance(node, ast.Name) and outer:  # ``args`` passed on: what is known of ``args.local_rank`` too
            prefix = node.id + "."
            out.update({name + "." + key[len(prefix):]: value for key, value in outer.items() if key.startswith(prefix)})
        if isinstance(node, ast.Name) and outer and node.id in outer:
            out[name] = outer[node.id]
        elif isinstance(node, ast.Name) and choices and node.id in choices:
            alternatives[name] = choices[node.id]
        else:
            value = const(node, default=UNKNOWN)
            if value is not UNKNOWN:
                out[name] = value

    given = set()
    for name, node in zip(params, call.args):
        given.add(name)
        bind(name, node)
    for keyword in call.keywords:
        given.add(keyword.arg)
        bind(keyword.arg, keyword.value)
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    defaults = [*zip(positional[len(positional) - len(args.defaults):], args.defaults),
                *((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)]
    for name, default in defaults:
        if name not in given:
            value = const(default, default=UNKNOWN)
            if value is not UNKNOWN:
                out[name] = value
    reassigned = {dotted(n) for n in walk(func, operators=False) if isinstance(n, (ast.Name, ast.Attribute))
                  and isinstance(n.ctx, ast.Store)}
    out = {k: v for k, v in out.items() if k not in reassigned and k.partition(".")[0] not in reassigned}
    variants = [out]
    for name, values in alternatives.items():
        if name in reassigned or len(variants) * len(values) > VARIANTS:
            continue
        variants = [{**v, name: value} for v in variants for value in values]
    return variants


def literal_choices(func: ast.AST) -> dict[str, tuple]:
    """Local names of ``func`` that only ever hold literals, with their values (``split = "dev"`` ... ``split =
    "test"``): not a parameter, assigned only as the single target of a literal."""
    literal: dict[str, list] = {}
    spoiled = {a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]}
    literal_targets = set()
    for node in walk(func, operators=False):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = const(node.value, default=UNKNOWN)
            if value is not UNKNOWN:
                literal_targets.add(id(node.targets[0]))
                literal.setdefault(node.targets[0].id, []).append(value)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in literal_targets:
            spoiled.add(node.id)
    out = {}
    for name, values in literal.items():
        if name not in spoiled:
            unique = []
            for value in values:
                if value not in unique:
                    unique.append(value)
            out[name] = tuple(unique)
    return out


def module_definitions(tree: ast.Module) -> frozenset[str]:
    """Names of the functions and classes defined at a module's top level."""
    return frozenset(s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))


def with_definitions(func: ast.AST, bound: dict, defined: frozenset[str]) -> dict:
    """``bound`` plus the module's definitions ``func`` does not shadow (a parameter or a local name)."""
    args = func.args
    local = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]} | {
        n.id for n in walk(func, operators=False) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return {**{name: DEFINED for name in defined - local}, **bound}


def path_tests(func: ast.AST) -> dict[int, tuple]:
    """id(call node) -> the ((test, holds), ...) a call of ``func``'s own body sits under: the ``if`` arms around
    it, and the ``if <test>: return`` exits before it (their test does not hold after them)."""
    out: dict[int, tuple] = {}
    flags = local_flags(func)

    def expr(node: ast.AST, conds: tuple) -> None:
        nodes = walk(node, operators=False)
        if not any(n.__class__ in _SCOPES for n in nodes):  # most expressions: every call under the same tests
            for n in nodes:
                if n.__class__ is ast.Call:
                    out.setdefault(id(n), conds)
            return
        if isinstance(node, ast.IfExp):
            expr(node.test, conds)
            expr(node.body, conds + ((node.test, True),))
            expr(node.orelse, conds + ((node.test, False),))
            return
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return
        if isinstance(node, ast.Call):
            out.setdefault(id(node), conds)
        for child in ast.iter_child_nodes(node):
            expr(child, conds)

    def block(stmts: list, conds: tuple) -> None:
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.If):
                expr(stmt.test, conds)
                test = flags.get(dotted(stmt.test), stmt.test)  # ``is_train = split == "train"; if is_train:``
                block(stmt.body, conds + ((test, True),))
                block(stmt.orelse, conds + ((test, False),))
                body_exits = bool(stmt.body) and isinstance(stmt.body[-1], TERMINAL)
                else_exits = bool(stmt.orelse) and isinstance(stmt.orelse[-1], TERMINAL)
                if body_exits and not else_exits:
                    conds = conds + ((test, False),)
                elif else_exits and not body_exits:
                    conds = conds + ((test, True),)
                continue
            nested = [getattr(stmt, name, None) for name in ("body", "orelse", "finalbody")]
            if any(isinstance(part, list) and part and isinstance(part[0], ast.stmt) for part in nested):
                for name in ("test", "iter", "items", "subject"):
                    part = getattr(stmt, name, None)
                    for node in part if isinstance(part, list) else [part] if part is not None else []:
                        expr(node, conds)
                for part in nested:
                    if isinstance(part, list):
                        block(part, conds)
                for handler in getattr(stmt, "handlers", []):
                    block(handler.body, conds)
                for case in getattr(stmt, "cases", []):
                    block(case.body, conds)
                continue
            expr(stmt, conds)

    block(func.body, ())
    return out


def local_flags(func: ast.AST) -> dict[str, ast.AST]:
    """Local names ``func`` binds exactly once, to a comparison or a boolean test (``is_train = split == "train"``):
    name -> that test."""
    stores: dict[str, int] = {}
    candidates = []
    for node in walk(func, operators=False):
        kind = node.__class__
        if kind is ast.Name:
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                stores[node.id] = stores.get(node.id, 0) + 1
        elif kind is ast.Assign and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
                isinstance(node.value, (ast.Compare, ast.BoolOp, ast.UnaryOp)):
            candidates.append(node)
    return {node.targets[0].id: node.value for node in candidates if stores[node.targets[0].id] == 1}


def reachable(conds: tuple, bound: dict) -> bool:
    """False when one of the tests a call sits under is known to go the other way with these bindings."""
    return not bound or all(truth(test, bound) in (holds, UNKNOWN) for test, holds in conds)


def truth(test: ast.AST, bound: dict):
    """True / False when the bindings decide ``test``, else UNKNOWN."""
    if isinstance(test, ast.NamedExpr):  # ``if (lead := split == "train"):`` tests the value it binds
        return truth(test.value, bound)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = truth(test.operand, bound)
        return UNKNOWN if inner is UNKNOWN else not inner
    if isinstance(test, ast.BoolOp):
        values = [truth(v, bound) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # ``or``: one True decides; ``and``: one False does
        if decisive in values:
            return decisive
        return UNKNOWN if UNKNOWN in values else not decisive
    name = dotted(test)
    if name is not None:
        return bool(bound[name]) if name in bound else UNKNOWN
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = _operand(test.left, bound), _operand(test.comparators[0], bound)
        if left is UNKNOWN or right is UNKNOWN or not (dotted(test.left) or dotted(test.comparators[0])):
            return UNKNOWN
        try:
            return _COMPARE[type(test.ops[0])](left, right)
        except (KeyError, TypeError):
            return UNKNOWN
    return UNKNOWN


def _operand(node: ast.AST, bound: dict):
    name = dotted(node)
    if name is not None:
        return bound.get(name, UNKNOWN)
    return const(node, default=UNKNOWN)


def path_facts(conds: tuple) -> dict:
    """``name.attr == literal`` (or ``!=`` not holding) facts a call's path establishes: under ``if
    args.local_rank == -1 and ...:`` the callee receiving ``args`` knows ``args.local_rank`` is -1."""
    facts: dict = {}
    for test, holds in conds:
        test = test.value if isinstance(test, ast.NamedExpr) else test
        parts = test.values if holds and isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        for part in parts:
            if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and dotted(part.left)):
                continue
            value = const(part.comparators[0], default=UNKNOWN)
            if value is not UNKNOWN and isinstance(part.ops[0], ast.Eq if holds else ast.NotEq):
                facts[dotted(part.left)] = value
    return facts


_COMPARE = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}
