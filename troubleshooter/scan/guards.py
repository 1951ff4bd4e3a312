"""Rank guards recognised by meaning: which expressions hold a rank, which are true on rank 0 only.

A value counts as a rank when it is spelled like one (``rank_names`` / ``rank_name_patterns``) or was
assigned from one (``self.gpu_id = int(os.environ["LOCAL_RANK"])``). A value counts as a main-process
flag when it is spelled like one (``main_process_names`` / ``main_process_patterns``), was derived from a
rank-0 test (``master_process = ddp_rank == 0``, ``args.save_logs = ... and is_master(args)``), or is a
function/property whose every ``return`` is such a test (``def is_primary(args): return args.rank == 0``).
A value that exists on the main process only (None on the others: ``writer = SummaryWriter() if rank == 0 else
None``, a ``logger=None`` parameter given a logger only under ``if rank == 0:``) makes ``if writer:`` /
``writer is not None`` a rank-0 test.
"""

from __future__ import annotations

import ast
from typing import Iterable

from troubleshooter.scan.patterns import Patterns

RANK0, NONZERO, RANKDEP = "rank0", "nonzero", "rank"
PREDICATE_STATEMENTS = 8  # functions longer than this are not read as rank predicates
_NAME, _ATTRIBUTE, _CONSTANT, _CALL, _SUBSCRIPT = ast.Name, ast.Attribute, ast.Constant, ast.Call, ast.Subscript
# Nodes ``ast.literal_eval`` always refuses (a call may be ``set()``, arithmetic a complex number: not these).
_NEVER_LITERAL = frozenset({ast.Name, ast.Attribute, ast.Subscript, ast.Compare, ast.BoolOp, ast.Lambda, ast.IfExp,
                            ast.JoinedStr, ast.Starred, ast.NamedExpr, ast.ListComp, ast.SetComp, ast.DictComp,
                            ast.GeneratorExp, ast.Await, ast.Yield, ast.YieldFrom, ast.Slice})
# The only expressions is_rank_expr or classify can find a rank in (a literal, a list, arithmetic... never are).
_MIRRORED = {ast.Eq: ast.Eq, ast.NotEq: ast.NotEq, ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}
_MAY_BE_RANK = frozenset({ast.Name, ast.Attribute, ast.Call, ast.Subscript})  # what is_rank_expr may accept
_RANK_VALUES = frozenset({ast.Call, ast.Name, ast.Attribute, ast.Subscript, ast.Compare, ast.BoolOp, ast.UnaryOp,
                          ast.IfExp})


def walk(root: ast.AST, operators: bool = True) -> list[ast.AST]:
    """``ast.walk``'s nodes in its breadth-first order, as a list, at about three times its speed: the scan's
    hottest loop (the project summary, the index and the checkers all read trees through it). The list is the
    queue itself, read while it grows. Each node class's child fields are looked up once (:func:`_child_fields`):
    fields holding names or literals are never read, lists of nodes are taken whole. ``operators=False`` leaves
    out the expression contexts and operators (``Load``, ``Store``, ``Add``, ``Eq``..., a third of a module's
    nodes), which tell nothing their parent's class does not: for loops that read ``node.ctx`` rather than visit
    it."""
    todo = [root]
    push, extend, table = todo.append, todo.extend, _CHILD_FIELDS[operators]
    for node in todo:
        fields = table.get(node.__class__)
        if fields is None:
            fields = _child_fields(node.__class__, operators)
        for name, shape in fields:
            child = getattr(node, name, None)
            if shape is _MANY:
                if child:  # None on a node built by hand without it
                    extend(child)
            elif shape is _ONE:
                if child is not None:
                    push(child)
            elif child.__class__ is list:  # a list that may hold None, or a field of unknown type
                extend([c for c in child if isinstance(c, ast.AST)])
            elif isinstance(child, ast.AST):
                push(child)
    return todo


def parent_map(root: ast.AST) -> dict[int, ast.AST]:
    """id(node) -> the node holding it, for every node under ``root`` but expression contexts and operators: one
    :func:`walk` (the same order, so a node reached twice keeps its last parent, as with ``ast.iter_child_nodes``)."""
    parents: dict[int, ast.AST] = {}
    todo = [root]
    push, extend, table = todo.append, todo.extend, _CHILD_FIELDS[False]
    for node in todo:
        fields = table.get(node.__class__)
        if fields is None:
            fields = _child_fields(node.__class__, False)
        start = len(todo)
        for name, shape in fields:
            child = getattr(node, name, None)
            if shape is _MANY:
                if child:
                    extend(child)
            elif shape is _ONE:
                if child is not None:
                    push(child)
            elif child.__class__ is list:
                extend([c for c in child if isinstance(c, ast.AST)])
            elif isinstance(child, ast.AST):
                push(child)
        for at in range(start, len(todo)):
            parents[id(todo[at])] = node
    return parents


# Types of the abstract grammar whose values are nodes (the rest, identifier/string/constant/int, are not).
_NODE_TYPES = frozenset({"mod", "stmt", "expr", "excepthandler", "arguments", "arg", "keyword", "alias", "withitem",
                         "match_case", "pattern", "type_ignore", "type_param", "comprehension", "slice"})
_OPERATOR_TYPES = frozenset({"expr_context", "boolop", "operator", "unaryop", "cmpop"})
_HOLES = frozenset({("Dict", "keys"), ("arguments", "kw_defaults")})  # node lists holding None (``{**d}``, ``*, k``)
_ONE, _MANY, _CHECKED = "one", "many", "checked"  # a node or None; a list of nodes; anything (checked per value)
_CHILD_FIELDS: dict[bool, dict[type, tuple[tuple[str, str], ...]]] = {True: {}, False: {}}


def _child_fields(kind: type, operators: bool) -> tuple[tuple[str, str], ...]:
    """(field, shape) of the fields of a node class that may hold nodes, in ``_fields`` order, read from the
    grammar line of its docstring (``Call(expr func, expr* args, keyword* keywords)``). A class whose docstring
    does not name its fields (a new node type) has every field checked value by value, like ``ast.walk``."""
    declared = {}
    head = (kind.__doc__ or "").partition("\n")[0]
    if head.startswith(f"{kind.__name__}(") and head.endswith(")"):
        for part in filter(None, (p.strip() for p in head[len(kind.__name__) + 1:-1].split(","))):
            grammar_type, _, name = part.rpartition(" ")
            declared[name] = grammar_type
    fields = []
    for name in getattr(kind, "_fields", ()):
        grammar_type = declared.get(name)
        base = (grammar_type or "").rstrip("*?")
        if base in _OPERATOR_TYPES:
            if operators:
                fields.append((name, _CHECKED))
        elif base in _NODE_TYPES:
            many = grammar_type.endswith("*")
            fields.append((name, _CHECKED if (kind.__name__, name) in _HOLES else _MANY if many else _ONE))
        elif grammar_type is None:
            if operators or name not in ("ctx", "op", "ops"):
                fields.append((name, _CHECKED))
    found = _CHILD_FIELDS[operators][kind] = tuple(fields)
    return found


def dotted(node: ast.AST | None) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None (called for most nodes of a scan: exact class tests)."""
    if node.__class__ is _NAME:
        return node.id
    parts = []
    while node.__class__ is _ATTRIBUTE:
        parts.append(node.attr)
        node = node.value
    if node.__class__ is _NAME:
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _called_last(func: ast.AST) -> str:
    """``last(dotted(func))`` without joining the name: the attribute of a chain of names and attributes."""
    kind = func.__class__
    if kind is _NAME:
        return func.id
    if kind is _ATTRIBUTE:
        node = func.value
        while node.__class__ is _ATTRIBUTE:
            node = node.value
        return func.attr if node.__class__ is _NAME else ""
    return ""


def last(name: str | None) -> str:
    """The last segment of a dotted name."""
    return (name or "").rpartition(".")[2]


def const(node: ast.AST | None, default=None):
    """The value of a literal (numbers, strings, True/False/None, tuples/lists of those)."""
    kind = node.__class__
    if kind is _CONSTANT:
        return node.value
    if node is None or kind in _NEVER_LITERAL:  # most nodes asked about: no ``literal_eval`` needed to say no
        return default
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return default


class RankLogic:
    """Classifies conditions by the ranks they are true on; learns derived names from assignments."""

    def __init__(self, patterns: Patterns, rank_vars: Iterable[str] = (), main_vars: Iterable[str] = (),
                 rank0_decorators: Iterable[str] = (), rank_switched: Iterable[str] = (),
                 off_main_vars: Iterable[str] = (), flag_sides: dict[str, tuple[str, str]] | None = None,
                 main_only_vars: Iterable[str] = ()):
        self.P = patterns
        self.rank_vars: set[str] = set(rank_vars)
        self.main_vars: set[str] = set(main_vars)
        self.rank0_decorators: set[str] = set(rank0_decorators)  # decorators that call the function on rank 0 only
        self.rank_switched: set[str] = set(rank_switched)  # objects switched off on some ranks (``disable=not is_main``)
        self.off_main_vars: set[str] = set(off_main_vars)  # flags true off the main process (``skip = rank != 0``)
        # other flags with one side known: ``dummy = args.run == "dummy" or not master`` is false on the main only
        self.flag_sides: dict[str, tuple[str, str]] = dict(flag_sides or {})
        self.int_constants: dict[str, int] = {}  # ``MAIN_RANK = 0``: upper-case names bound once to an integer
        self._rank_takers: frozenset[str] | None = None  # calls whose ``rank=`` keyword takes a rank
        # values that exist on the main process only, None elsewhere (``writer = SummaryWriter() if rank == 0 else
        # None``; a ``logger=None`` parameter passed a logger only under ``if rank == 0:``): ``if writer:`` is rank 0's
        self._seeded_main_only = frozenset(main_only_vars)
        self.main_only_vars: frozenset[str] = self._seeded_main_only  # resolved when learning is over (resolve_...)
        self._unresolved = False  # learnt something since main_only_vars was last resolved
        self._value_kinds: dict[str, set] = {}  # last name -> kinds of every value bound to it (see _value_kind)
        self._param_defaults: dict[str, list[list[tuple[str, object]]]] = {}  # callable -> [(param, default kind)]
        self._passed: dict[str, list[tuple[ast.Call, bool]]] = {}  # callable -> its calls (and: made on rank 0)

    # ---- learning ---------------------------------------------------------------------------
    def learn(self, assigns: list[ast.AST], functions: list[ast.AST], calls: list[ast.Call] = (),
              ifs: list[ast.If] = (), main_only: bool = True) -> None:
        """Add names assigned from a rank / a rank-0 test, predicates returning one, and parameters a rank
        is passed to (``Trainer(model, rank)``, ``mp.spawn(worker, ...)``), to a fixpoint; and (``main_only``) the
        evidence for values that exist on the main process only."""
        params = _parameters(functions)
        spawners = {last(s) for s in self.P.spawners}
        known = params.keys() | spawners
        self._learn_rank_arguments(calls)
        calls = [c for c in calls if _called_last(c.func) in known]
        # a predicate is a small function: its returns are read once
        returns = {func: _returns(func) for func in functions if len(func.body) <= PREDICATE_STATEMENTS}
        # (target, its last name, value) of each single-target assignment of a value that may be read as a rank or a
        # rank test (no other value ever is), found once for every pass of the fixpoint
        bound = []
        constants: dict[str, list] = {}
        defs = None  # function name -> its definitions, built on the first tuple assignment
        for stmt in assigns:
            targets = stmt.targets if stmt.__class__ is ast.Assign else [stmt.target]
            if len(targets) == 1 and targets[0].__class__ is _NAME and targets[0].id.isupper():
                constants.setdefault(targets[0].id, []).append(const(stmt.value))
            if len(targets) != 1:
                continue
            pairs = [(targets[0], stmt.value)]
            if targets[0].__class__ is ast.Tuple:
                if defs is None:
                    defs = {}
                    for func in functions:
                        defs.setdefault(func.name, []).append(func)
                pairs = _unpacked(targets[0], stmt.value, defs)
            for target, value in pairs:
                name = last(dotted(target)) if value.__class__ in _RANK_VALUES else None
                if name:
                    bound.append((target, name, value))
        self.int_constants.update((name, values[0]) for name, values in constants.items()
                                  if len(values) == 1 and values[0].__class__ is int)
        for _ in range(3):
            before = len(self.rank_vars) + len(self.main_vars) + len(self.off_main_vars) + len(self.flag_sides)
            for target, name, value in bound:
                if name in self.rank_vars or name in self.main_vars or name in self.off_main_vars:
                    continue
                if self.is_rank_expr(value):
                    self.rank_vars.add(name)
                    continue
                sides = self.classify(value)  # read once: a rank-0 value, another flag, or neither
                if sides and sides[0] == RANK0:
                    self.main_vars.add(name)
                elif value.__class__ is not ast.Call:
                    if sides == (NONZERO, RANK0):
                        self.off_main_vars.add(name)
                    elif sides and RANK0 in sides and name not in self.flag_sides:
                        self.flag_sides[name] = sides
                elif any(k.arg in self.P.rank_switch_keywords and self.classify(k.value) for k in value.keywords):
                    self.rank_switched.add(dotted(target) or name)
            for func, values in returns.items():
                if not values or func.name in self.main_vars or func.name in self.rank_vars:
                    continue
                if all(self._rank0_value(v) for v in values):
                    self.main_vars.add(func.name)
                elif all(self.is_rank_expr(v) for v in _rank_arms(values) or values):
                    self.rank_vars.add(func.name)
            for call in calls:
                self._learn_call(call, params, spawners)
            if before == len(self.rank_vars) + len(self.main_vars) + len(self.off_main_vars) + len(self.flag_sides):
                break
        self.rank0_decorators.update(f.name for f in functions if self._is_rank0_decorator(f))
        if main_only:
            self._learn_main_only(assigns, functions, calls, ifs)

    # ---- values that exist on the main process only -------------------------------------------
    def _learn_main_only(self, assigns: list[ast.AST], functions: list[ast.AST], calls: list[ast.Call],
                         ifs: list[ast.If]) -> None:
        """Record the kind of every value bound to a name (by assignment, parameter default, or argument) and
        resolve which names hold a value on the main process only: every binding is None or made on rank 0 (in a
        rank-0 arm of an ``if`` or of ``x if <rank 0> else None``, or another such name), and one is not None."""
        on_rank0 = set()
        for node in ifs:
            sides = self.classify(node.test)
            for side, block in zip(sides or (), (node.body, node.orelse)):
                if side == RANK0:
                    on_rank0.update(id(n) for stmt in block for n in walk(stmt, operators=False))
        for stmt in assigns:
            for target in stmt.targets if stmt.__class__ is ast.Assign else [stmt.target]:
                pairs = [(target, stmt.value)]
                if target.__class__ in (ast.Tuple, ast.List):  # ``a, b = None, None``; ``a, b = setup()``: unknown
                    values = stmt.value.elts if stmt.value.__class__ in (ast.Tuple, ast.List) else ()
                    pairs = list(zip(target.elts, values)) if len(values) == len(target.elts) else [
                        (element, stmt) for element in target.elts]
                for element, value in pairs:
                    name = last(dotted(element))
                    if name:
                        kind = "other" if value is stmt else self._value_kind(value, id(stmt) in on_rank0)
                        self._value_kinds.setdefault(name, set()).add(kind)
        for func in functions:
            args = func.args
            positional = [*args.posonlyargs, *args.args]
            defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
            pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
            if pairs and pairs[0][0].arg in ("self", "cls"):
                pairs = pairs[1:]
            kinds = [(a.arg, None if d is None else "none" if const(d, default=...) is None else "other")
                     for a, d in pairs]
            for name in {func.name, getattr(func, "owner_class", None) if func.name == "__init__" else None} - {None}:
                self._param_defaults.setdefault(name, []).append(kinds)
        passed = self._passed
        for call in calls:  # read when resolving, and only for the callables some module defines
            if call.args or call.keywords:
                name = _called_last(call.func)
                if name:
                    found = passed.get(name)
                    if found is None:
                        passed[name] = [(call, id(call) in on_rank0)]
                    else:
                        found.append((call, id(call) in on_rank0))
        self._unresolved = True

    def resolve_main_only(self) -> frozenset[str]:
        """Resolve (once every module is learnt: the evidence spans modules) the names whose value exists on the main
        process only; ``if name:`` / ``name is not None`` are rank-0 tests from then on."""
        if self._unresolved:
            self.main_only_vars = self._seeded_main_only | self._resolve_main_only()
            self._unresolved = False
        return self.main_only_vars

    def _value_kind(self, value: ast.AST, on_rank0: bool):
        """``"none"``; ``"main"`` (made on rank 0 only); ``"main or none"`` (``x if rank == 0 else None``); ``("alias",
        name)`` (another name's value); else ``"other"``."""
        if value.__class__ is _CONSTANT and value.value is None:
            return "none"
        if on_rank0:
            return "main"
        if value.__class__ is ast.IfExp:
            sides = self.classify(value.test)
            arms = [(side, arm) for side, arm in zip(sides or (), (value.body, value.orelse))
                    if not (arm.__class__ is _CONSTANT and arm.value is None)]
            return "main or none" if sides and len(arms) == 1 and arms[0][0] == RANK0 else "other"
        name = last(dotted(value))
        return ("alias", name) if name else "other"

    def _resolve_main_only(self) -> set[str]:
        kinds = {name: set(found) for name, found in self._value_kinds.items()}
        for callable_name, definitions in self._param_defaults.items():
            passed = [([None if a.__class__ is ast.Starred else self._value_kind(a, main) for a in call.args],
                       {k.arg: self._value_kind(k.value, main) for k in call.keywords if k.arg})
                      for call, main in self._passed.get(callable_name, ())]
            for params in definitions:
                for position, (param, default) in enumerate(params):
                    found = kinds.setdefault(param, set())
                    given = [k for args, keywords in passed for k in (
                        args[position] if position < len(args) else keywords.get(param),) if k is not None]
                    found.update(given)
                    if default is not None:
                        found.add(default)
                    elif not given:
                        found.add("other")  # a parameter nothing visible passes: its value is unknown
        known = {name for name, found in kinds.items() if "other" not in found}
        while True:  # every binding: None, made on rank 0, or a name that holds such values
            kept = {name for name in known if all(k in ("none", "main", "main or none") or k[1] == name or k[1] in known
                                                  for k in kinds[name])}
            if kept == known:
                break
            known = kept
        # made on rank 0 and seen to be None elsewhere (a name only ever set under ``if rank == 0:`` may hold a value
        # bound where the scan does not see it: ``args.output_dir`` from the command line)
        main_only = {name for name in known if "main or none" in kinds[name] or {"main", "none"} <= kinds[name]}
        grown = True
        while grown:  # ... and one of them is a value made on rank 0
            grown = {name for name in known - main_only if any(
                k.__class__ is tuple and k[1] in main_only for k in kinds[name])}
            main_only |= grown
        return main_only

    def _main_only_test(self, test: ast.AST) -> tuple[str, str] | None:
        """``if writer:`` / ``writer is not None`` (rank 0's side first) and ``writer is None`` for a main-only value."""
        if test.__class__ is ast.Compare and len(test.ops) == 1 and const(test.comparators[0], default=...) is None \
                and test.comparators[0].__class__ is _CONSTANT:
            if _called_last(test.left) in self.main_only_vars and test.left.__class__ is not _CALL:
                op = test.ops[0].__class__
                return (RANK0, NONZERO) if op in (ast.IsNot, ast.NotEq) else (NONZERO, RANK0) if op in (
                    ast.Is, ast.Eq) else None
            return None
        if (test.__class__ is _NAME or test.__class__ is _ATTRIBUTE) and _called_last(test) in self.main_only_vars:
            return (RANK0, NONZERO)
        return None

    def _learn_rank_arguments(self, calls: list[ast.Call]) -> None:
        """A name handed to the process group or a distributed sampler as its rank (``init_process_group(...,
        rank=lrank)``, ``DistributedSampler(data, rank=proc)``) holds a rank, whatever it is called."""
        takers = self._rank_takers
        if takers is None:
            takers = self._rank_takers = frozenset(
                last(q) for q in (*self.P.init_process_group, *self.P.distributed_samplers))
        for call in calls:
            if call.keywords and _called_last(call.func) in takers:
                for keyword in call.keywords:
                    name = last(dotted(keyword.value)) if keyword.arg and self._rank_name(keyword.arg) else None
                    if name and not self._rank_name(name):
                        self.rank_vars.add(name)

    def _is_rank0_decorator(self, func: ast.AST) -> bool:
        """``def main_process(func): def wrapper(*a, **kw): if is_main_process(): return func(*a, **kw)``:
        the decorated function runs on rank 0 only (LAVIS ``main_process``, mmcv ``master_only``)."""
        params = [a.arg for a in func.args.args]
        if len(params) != 1 or not any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) for s in func.body):
            return False
        for inner in func.body:
            if not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            calls_it = False  # the wrapped function called outside any rank test: not a rank-0 decorator
            for stmt in inner.body:
                called = any(isinstance(n, ast.Call) and dotted(n.func) == params[0] for n in walk(stmt))
                sides = self.classify(stmt.test) if isinstance(stmt, ast.If) else None
                if not sides:
                    calls_it |= called
                elif sides[0] == RANK0 and any(isinstance(n, ast.Call) and dotted(n.func) == params[0]
                                               for part in stmt.body for n in walk(part)):
                    return not calls_it
        return False

    def is_rank0_decorator(self, node: ast.AST) -> bool:
        """A decorator (``@rank_zero_only``, ``@main_process``, ``@master_only``) that runs the function on rank 0 only."""
        name = last(dotted(node.func if isinstance(node, ast.Call) else node))
        return bool(name) and (name in self.P.rank_zero_decorators or name in self.rank0_decorators
                               or self.is_main_flag(ast.Name(name, ast.Load())))

    def _learn_call(self, call: ast.Call, params: dict[str, list[list[str]]], spawners: set[str]) -> None:
        name = last(dotted(call.func))
        spawned = call.args[0] if call.args else next(  # mp.spawn(worker, ...) or mp.spawn(fn=worker, ...)
            (k.value for k in call.keywords if k.arg in self._spawned_params()), None)
        if name in spawners and spawned is not None:  # the spawned function's first parameter is the process index
            for names in params.get(last(dotted(spawned)), ()):
                if names:
                    self.rank_vars.add(names[0])
            return
        for names in params.get(name, ()):
            for position, arg in enumerate(call.args):
                if position < len(names) and not isinstance(arg, ast.Starred) and self.is_rank_expr(arg):
                    self.rank_vars.add(names[position])
        if name in params:
            for keyword in call.keywords:
                if keyword.arg and self.is_rank_expr(keyword.value):
                    self.rank_vars.add(keyword.arg)

    def _spawned_params(self) -> set[str]:
        """The name of a spawner's function parameter (``fn`` of ``torch.multiprocessing.spawn``: call_signatures)."""
        return {sig[0] for qual, sig in self.P.signatures.items() if qual in self.P.spawners and sig}

    def _rank0_value(self, value: ast.AST) -> bool:
        sides = self.classify(value)
        return bool(sides) and sides[0] == RANK0

    # ---- queries ----------------------------------------------------------------------------
    def _rank_name(self, name: str) -> bool:
        return name in self.P.rank_names or name in self.rank_vars or self.P.matches("rank_name_patterns", name)

    def is_rank_expr(self, node: ast.AST) -> bool:
        """``rank``, ``args.local_rank``, ``dist.get_rank()``, ``int(os.environ["RANK"])``, a name assigned from one."""
        kind = node.__class__
        if kind is _NAME or kind is _ATTRIBUTE:  # most nodes asked about (every name a rank test may mention)
            name = _called_last(node)
            return bool(name) and self._rank_name(name)
        if kind is _CALL:
            func = node.func
            if func.__class__ is _NAME and func.id == "int" and node.args:
                return self.is_rank_expr(node.args[0])
            called = _called_last(func)
            if called in ("get", "getenv") and node.args:  # os.environ.get("RANK", 0), os.getenv
                key = const(node.args[0])
                return isinstance(key, str) and key in self.P.rank_names
            return self._rank_name(called)
        if kind is _SUBSCRIPT:
            key = const(node.slice)
            return isinstance(key, str) and key in self.P.rank_names
        return False  # no other expression is a name

    def is_main_flag(self, node: ast.AST) -> bool:
        """``is_main_process()``, ``args.is_master``, ``utils.is_primary(args)``, a flag derived from one."""
        target = node.func if node.__class__ is _CALL else node
        name = _called_last(target)
        return bool(name) and (name in self.P.main_process_names or name in self.main_vars
                               or self.P.matches("main_process_patterns", name)
                               or self.P.matches("main_process_patterns", dotted(target)))

    def mentions_rank(self, node: ast.AST, nodes: list[ast.AST] | None = None) -> bool:
        """True when any part of ``node`` is a rank expression (``nodes``: its :func:`walk` without operators, when
        the caller has it)."""
        return any(self.is_rank_expr(n) for n in (walk(node, operators=False) if nodes is None else nodes)
                   if n.__class__ in _MAY_BE_RANK)

    def classify(self, test: ast.AST) -> tuple[str, str] | None:
        """(side of the body, side of the else) when ``test`` depends on the rank, else None."""
        kind = test.__class__
        if kind is ast.NamedExpr:  # ``if (is_main := rank == 0):`` tests the value it binds
            return self.classify(test.value)
        if kind is ast.IfExp:  # ``local_rank == 0 if local else rank == 0``: both arms the same test
            body = self.classify(test.body)
            if body and body == self.classify(test.orelse):
                return body
            return self._one_process_arm(test) if self.classify(test.test) is None else None
        if kind is ast.UnaryOp and test.op.__class__ is ast.Not:
            inner = self.classify(test.operand)
            return (inner[1], inner[0]) if inner else None
        if kind is ast.BoolOp:
            parts = [self.classify(v) for v in test.values]
            known = [p for p in parts if p]
            if not known:
                return None
            # the else side is the negation: ``not (a and b)`` is ``not a or not b`` and the other way round
            if test.op.__class__ is ast.And:
                body = RANK0 if any(p[0] == RANK0 for p in known) else \
                    NONZERO if any(p[0] == NONZERO for p in known) else RANKDEP
                # ``if not is_main() and not is_xla(): return``: what follows runs on the main process (or under XLA)
                return body, RANK0 if all(p[1] == RANK0 for p in known) else RANKDEP
            # ``not distributed or rank == 0``: in a distributed run, only rank 0
            body = RANK0 if all(p[0] == RANK0 for p in known) else RANKDEP
            return body, RANK0 if any(p[1] == RANK0 for p in known) else RANKDEP
        if self.is_main_flag(test):
            return (RANK0, NONZERO)
        if self.off_main_vars and _called_last(test) in self.off_main_vars:
            return (NONZERO, RANK0)
        if self.flag_sides and _called_last(test) in self.flag_sides:
            return self.flag_sides[_called_last(test)]
        if self.is_rank_expr(test):  # ``if rank:`` is true off rank 0
            return (NONZERO, RANK0)
        if kind is ast.Compare and len(test.ops) == 1:
            sides = self._compare(test.left, test.ops[0], test.comparators[0])
            if sides is not None:
                return sides
        if self.main_only_vars:
            sides = self._main_only_test(test)
            if sides is not None:
                return sides
        return (RANKDEP, RANKDEP) if self.rank_switched and self._reads_switched(test) else None

    def _one_process_arm(self, test: ast.IfExp) -> tuple[str, str] | None:
        """``rank == 0 if is_dist() else True``: a rank test in one arm, a constant in the other (the one-process
        arm), read as ``not dist or rank == 0`` (constant True) or ``dist and rank == 0`` (constant False)."""
        for known, other in ((test.body, test.orelse), (test.orelse, test.body)):
            value = const(other, default=...)
            sides = self.classify(known) if isinstance(value, bool) else None
            if sides:
                if value:
                    return tuple(RANK0 if side == RANK0 else RANKDEP for side in sides)
                return sides[0], RANK0 if sides[1] == RANK0 else RANKDEP
        return None

    def _reads_switched(self, test: ast.AST) -> bool:
        """``progress_bar.n % eval_steps == 0`` where the bar is disabled on some ranks: true on different ranks."""
        return any(n.__class__ is _ATTRIBUTE and dotted(n.value) in self.rank_switched
                   for n in walk(test, operators=False))

    def _compare(self, left: ast.AST, op: ast.cmpop, right: ast.AST) -> tuple[str, str] | None:
        left, right = _bound_value(left), _bound_value(right)  # ``(r := dist.get_rank()) == 0``
        if type(op) in _MIRRORED and const(left, default=...) is not ... and const(right, default=...) is ...:
            left, right, op = right, left, _MIRRORED[type(op)]()  # ``0 == rank % ngpus``: the literal on the right
        if self.is_main_flag(left) and isinstance(op, (ast.Eq, ast.Is)) and const(right) is True:
            return (RANK0, NONZERO)
        if not self.is_rank_expr(left):
            if self.is_rank_expr(right) and isinstance(op, (ast.Eq, ast.NotEq)):
                left, right = right, left
            elif self._mod_of_rank(left):
                # ``rank % ngpus_per_node == 0``: the first process of each node (rank 0 among them)
                if const(right) == 0 and isinstance(op, (ast.Eq, ast.NotEq)):
                    return (RANK0, NONZERO) if isinstance(op, ast.Eq) else (NONZERO, RANK0)
                return (RANKDEP, RANKDEP)
            else:
                return None
        value = const(right, default=...)
        if value is ... and right.__class__ is _NAME:
            value = self.int_constants.get(right.id, ...)  # ``rank == MAIN_RANK``: the module's constant
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)  # ``os.environ["LOCAL_RANK"] == "0"``: the environment holds the rank as text
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(value, (tuple, list, set)) and value:
            zero_only = all(isinstance(v, int) and v <= 0 for v in value)
            side = (RANK0, NONZERO) if zero_only else (RANKDEP, RANKDEP)
            return side if isinstance(op, ast.In) else (side[1], side[0])
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return None  # ``rank is None`` / ``local_rank != -1`` mean "distributed or not", same on every rank
        if value == 0 and isinstance(op, (ast.GtE, ast.Lt)):
            return None  # ``local_rank >= 0`` / ``rank < 0``: set or not, the same on every rank
        table = {ast.Eq: value == 0, ast.LtE: value == 0, ast.Lt: value == 1}
        if type(op) in table and table[type(op)]:
            return (RANK0, NONZERO)
        table = {ast.NotEq: value == 0, ast.Gt: value == 0, ast.GtE: value == 1}
        if type(op) in table and table[type(op)]:
            return (NONZERO, RANK0)
        return (RANKDEP, RANKDEP)

    def _mod_of_rank(self, node: ast.AST) -> bool:
        return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and self.is_rank_expr(node.left)


def _rank_arms(values: list[ast.AST]) -> list[ast.AST]:
    """The returned values that may be a rank, with the arms of ``x if c else y`` apart and the one-process
    answer ``0`` left out (``return dist.get_rank() if is_dist() else 0``; ``if not dist: return 0``)."""
    arms = [a for v in values for a in ((v.body, v.orelse) if v.__class__ is ast.IfExp else (v,))]
    return [a for a in arms if not (a.__class__ is ast.Constant and a.value == 0 and a.value is not False)]


def _unpacked(target: ast.Tuple, value: ast.AST, defs: dict[str, list]) -> list[tuple[ast.AST, ast.AST]]:
    """(name, value) pairs of a tuple assignment: ``rank, local = int(env["RANK"]), ...`` element by element, and
    ``rank, local = setup()`` with each tuple ``setup`` (a function of the module) returns."""
    width = len(target.elts)
    if value.__class__ is ast.Tuple:
        return list(zip(target.elts, value.elts)) if len(value.elts) == width else []
    if value.__class__ is not ast.Call:
        return []
    returned = [r for func in defs.get(last(dotted(value.func)), ()) for r in _returns(func)]
    return [(name, r.elts[i]) for r in returned if r.__class__ is ast.Tuple and len(r.elts) == width
            for i, name in enumerate(target.elts)]


def _bound_value(node: ast.AST) -> ast.AST:
    """The value of an assignment expression (``(rank := get_rank())`` -> ``get_rank()``), else the node."""
    return node.value if isinstance(node, ast.NamedExpr) else node


def mark_methods(cls: ast.ClassDef) -> None:
    """Tag each method node with its class name (``owner_class``): a call of the class reaches ``__init__``."""
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            item.owner_class = cls.name


def _parameters(functions: list[ast.AST]) -> dict[str, list[list[str]]]:
    """Callable name -> positional parameter names of each definition (``__init__`` under its class name)."""
    out: dict[str, list[list[str]]] = {}
    for func in functions:
        names = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
        if names and names[0] in ("self", "cls"):
            names = names[1:]
        out.setdefault(func.name, []).append(names)
        owner = getattr(func, "owner_class", None)
        if func.name == "__init__" and owner:
            out.setdefault(owner, []).append(names)
    return out


def _returns(func: ast.AST) -> list[ast.AST]:
    """The returned values of a small function: its own statements and those of its ``if``/``else`` blocks."""
    out, todo = [], list(func.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            out.append(stmt.value)
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
            todo.extend(stmt.body)
            todo.extend(getattr(stmt, "orelse", []))
    return out
