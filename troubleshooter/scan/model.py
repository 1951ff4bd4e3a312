"""The analysis core every checker shares: one pass over a module's AST builds an index.

The index knows, for every call: its qualified name after following imports, the receiver of
a method call, the function it sits in, the loops and ``with`` blocks around it, and which
rank-dependent branches it is under (``if rank == 0``, ``if not is_master: return`` ...).
It also records assignments (so "assigned, then used later" can be followed), loops,
classes and functions. Parsing uses :mod:`ast` only: user code is never imported or run.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from troubleshooter.scan.callargs import TERMINAL
from troubleshooter.scan.guards import (  # noqa: F401
    NONZERO, RANK0, RANKDEP, RankLogic, const, dotted, last, mark_methods, walk)
from troubleshooter.scan.patterns import Patterns


_NAME, _ATTRIBUTE, _CALL, _CONSTANT, _LOAD = ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.Load
# Statements holding blocks of statements (ModuleIndex._stmt follows them; any other statement is indexed whole).
_NESTING = frozenset(k for k in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor,
                                 ast.While, ast.With, ast.AsyncWith, ast.Try, getattr(ast, "TryStar", None),
                                 getattr(ast, "Match", None)) if k is not None)


def source(node: ast.AST) -> str:
    """Short source text of a node (for messages)."""
    try:
        text = ast.unparse(node)
    except Exception:  # unparse may fail on odd trees; a message must not
        return "?"
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(eq=False)
class FuncInfo:
    """A function or method definition."""

    name: str
    node: ast.AST
    cls: str | None
    rank0: bool = False  # every call site runs on rank 0 only (or a rank-zero decorator)
    module_level: bool = False  # defined at the module's top level (reached by its bare name or by import)
    rank0_first: bool = False  # every call site runs under a rank-zero-first context (rank 0, then the others)


@dataclass(frozen=True)
class Ctx:
    """Where a statement sits: function, rank-dependent branches, loops, ``with`` blocks."""

    func: FuncInfo | None = None
    sides: tuple = ()  # ((branch_id, side, arm), ...) per enclosing rank-dependent branch; arm 0 body, 1 else
    loops: tuple = ()
    withs: tuple = ()
    dist_branch: bool = False  # under an ``if`` on a distributed flag (``if args.distributed``)
    optional: bool = False  # under an ``if`` on something else (a configuration switch, data)

    def but(self, **changes) -> "Ctx":
        """This context with ``changes`` (``dataclasses.replace`` without its field introspection nor the frozen
        ``__init__``'s one ``object.__setattr__`` per field: the index makes one per loop, ``with`` and ``if`` arm)."""
        new = object.__new__(Ctx)
        fields = new.__dict__
        fields.update(self.__dict__)
        fields.update(changes)
        return new


@dataclass(eq=False)
class CallSite:
    """One call in the module with its resolved name and context."""

    node: ast.Call
    name: str  # qualified name ("torch.nn.parallel.DistributedDataParallel"), or "" when unknown
    method: str  # last segment of the called name ("to", "set_epoch")
    recv: str | None  # dotted receiver of a method call ("model" in model.to(d)), else None
    ctx: Ctx
    assigned_to: str | None = None  # ``x = call(...)``: "x"
    unpacked_to: tuple = ()  # ``a, b = call(...)``: ("a", "b") (None for a part that is not a name)
    discarded: bool = False  # a bare expression statement: the result is thrown away
    params: tuple = ()  # the callee's parameters in positional order, when its signature is known (call_signatures)

    @property
    def line(self) -> int:
        """1-based line of the call."""
        return self.node.lineno

    @property
    def func(self) -> FuncInfo | None:
        """The enclosing function (None at module level)."""
        return self.ctx.func

    @property
    def rank0(self) -> bool:
        """Runs on rank 0 / the main process only (own branch, early return, or every caller)."""
        sides = self.ctx.sides
        return bool(sides) and any(entry[1] == RANK0 for entry in sides) or bool(self.ctx.func and self.ctx.func.rank0)

    @property
    def rank_conditional(self) -> bool:
        """Runs on some ranks only."""
        return bool(self.ctx.sides)

    def kw(self, name: str) -> ast.AST | None:
        """The value of argument ``name``: its keyword, or (for a callee of known signature) the positional argument
        in its place (``DataLoader(ds, 32, False, sampler)``); None when not passed."""
        for keyword in self.node.keywords:
            if keyword.arg == name:
                return keyword.value
        if name in self.params:
            index, args = self.params.index(name), self.node.args
            if index < len(args) and not any(a.__class__ is ast.Starred for a in args[:index + 1]):
                return args[index]
        return None

    def arg(self, index: int, name: str | None = None) -> ast.AST | None:
        """Positional argument ``index`` or keyword ``name``."""
        if len(self.node.args) > index and not isinstance(self.node.args[index], ast.Starred):
            return self.node.args[index]
        return self.kw(name) if name else None


@dataclass(eq=False)
class Binding:
    """``target = value`` at a line, in a function (None: module level)."""

    target: str
    value: ast.AST
    line: int
    func: FuncInfo | None
    ctx: Ctx


@dataclass(eq=False)
class LoopInfo:
    """A ``for``/``while`` loop."""

    node: ast.AST
    ctx: Ctx
    target: str | None  # dotted text of a simple loop variable
    iter_names: frozenset  # dotted names mentioned in the iterable


class ModuleIndex:
    """Everything the checkers need to know about one parsed file."""

    def __init__(self, tree: ast.Module, text: str, path: str, patterns: Patterns, project=None):
        self.tree, self.text, self.path, self.P = tree, text, path, patterns
        self.project = project
        self.inlined: list[ast.stmt] = []  # statements inlined from local helpers (set by the scan; the text spells them
        # only in part: a name the helper imports is read as its qualified name)
        self._dead: list[tuple[int, int]] | None = None
        self._training_loops: dict[int, bool] = {}
        # every conditional expression and assignment of the module (the expanded one: inlined statements too), in
        # the order the index found them (not walk order): for checkers that look for one anywhere in the file
        self.ifexps: list[ast.IfExp] = []
        self.assigns: list[ast.Assign | ast.AnnAssign] = []
        self._ifexp_sides: dict[int, tuple] = {}  # call node id -> rank side of the ``a if rank0 else b`` arm
        self.distributed_ifs: list[ast.If] = []  # ``if`` statements whose test reads the distributed state or a rank
        self.aliases: dict[str, str] = {}
        self.local_defs: set[str] = set()
        self.calls: list[CallSite] = []
        self.bindings: dict[str, list[Binding]] = {}
        self.loops: list[LoopInfo] = []
        self.functions: dict[str, list[FuncInfo]] = {}  # name -> its function/method definitions (no class bodies)
        self.classes: dict[str, ast.ClassDef] = {}
        self._loads: list[ast.AST] = []  # the names and attributes read, in walk order (``loaded`` counts them)
        self._loaded: Counter | None = None
        self.strings: set[str] = set()
        self.branch_ids = 0
        self._call_by_node: dict[int, CallSite] = {}
        self._sites_in: dict[int, list[CallSite]] = {}  # id(node) -> calls inside it (sites_in)
        self._nodes_in: dict[int, list[ast.AST]] = {}  # id(node) -> nodes under it (nodes_in)
        self._nodes_of: dict[type, list[ast.AST]] | None = None  # node class -> the module's nodes of it (nodes_of)
        self._by_method: dict[str, list[CallSite]] | None = None  # method name -> method calls (methods)
        self._by_loop: dict[int, list[CallSite]] | None = None  # id(loop) -> calls whose innermost loop it is
        # names of the scan's own rank-zero-first context managers (set by propagate_rank0)
        self.rank0_first_contexts: frozenset[str] = frozenset()
        self.memo: dict[str, object] = {}  # shared checker queries answered once per module (checkers/_common.py)
        self._positions_by_name: dict[str, list[int]] | None = None  # call name -> positions in calls (calls_named)
        assigns, defs, calls, ifs = self._collect_imports(tree)
        self.assigns = assigns
        self.guards = RankLogic(patterns, *(project.rank_names() if project else ()))
        if project is not None:
            self.guards.int_constants = project.guards.int_constants
        if project is None or project.parts(tree) is None:  # else the project learnt this module already
            self.guards.learn(assigns, defs, calls, ifs)
            self.guards.resolve_main_only()
        self._mark_ifexp_arms()
        self._block(tree.body, Ctx())
        propagate_rank0([self])
        self.call_names = frozenset(c.name for c in self.calls if c.name)

    # ---- imports and names -----------------------------------------------------------------
    def _collect_imports(self, tree: ast.Module) -> tuple[list[ast.AST], list[ast.AST], list[ast.Call], list[ast.If]]:
        """Record imports and local definitions; return the assignments, functions, calls and ``if`` statements (for
        the guards)."""
        stars, assigns, defs, calls, ifs = [], [], [], [], []
        walked = self.project.parts(tree) if self.project is not None else None
        for node in walked if walked is not None else walk(tree):
            if isinstance(node, ast.Call):
                calls.append(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                assigns.append(node)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        head = alias.name.partition(".")[0]
                        self.aliases[head] = head
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name == "*":
                        stars.append(node.module)
                    else:
                        self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.IfExp):
                self.ifexps.append(node)
            elif isinstance(node, ast.If):
                ifs.append(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.local_defs.add(node.name)
                if not isinstance(node, ast.ClassDef):
                    defs.append(node)
                else:
                    mark_methods(node)
        if stars:
            for key in ("ddp_wrappers", "dataloaders", "distributed_samplers", "dataparallel"):
                for qual in getattr(self.P, key):
                    module, _, name = qual.rpartition(".")
                    if module in stars:
                        self.aliases.setdefault(name, qual)
        return assigns, defs, calls, ifs

    def qual(self, node: ast.AST | None) -> str:
        """Qualified name of a Name/Attribute chain after following imports ("" if not a chain)."""
        text = dotted(node)
        return self._qual_text(text) if text else ""

    def _qual_text(self, text: str) -> str:
        """:meth:`qual` of a dotted name."""
        head, dot, rest = text.partition(".")
        if head in self.aliases and head not in self.local_defs:
            return self.aliases[head] + dot + rest
        return text

    # ---- the single pass -------------------------------------------------------------------
    def _block(self, stmts: list[ast.stmt], ctx: Ctx) -> Ctx:
        """Index a block; return the context after it (an early return in it guards what follows)."""
        for stmt in stmts:
            ctx = self._stmt(stmt, ctx)
        return ctx

    def _stmt(self, stmt: ast.stmt, ctx: Ctx) -> Ctx:
        """Index one statement; return the context for the statements after it (early returns)."""
        if stmt.__class__ not in _NESTING:  # most statements: no block inside
            return self._simple(stmt, ctx)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            cls = ctx.func.cls if ctx.func and ctx.func.name == "<class>" else None
            info = FuncInfo(stmt.name, stmt, cls, module_level=ctx.func is None)
            self.functions.setdefault(stmt.name, []).append(info)
            for expr in [*stmt.decorator_list, *stmt.args.defaults, *stmt.args.kw_defaults]:
                if expr is not None:
                    self._expr(expr, ctx)
            # a function defined inside another exists only in the processes that ran its ``def``: after a rank-0
            # early return (or in a rank-0 arm) it runs on rank 0 only, wherever it is called or handed to
            sides = ctx.sides if ctx.func is not None and ctx.func.name != "<class>" else ()
            if any(self.guards.is_rank0_decorator(d) for d in stmt.decorator_list):
                sides += ((self._new_branch(), RANK0, 0),)
            self._block(stmt.body, Ctx(func=info, sides=sides))
            return ctx
        if isinstance(stmt, ast.ClassDef):
            self.classes[stmt.name] = stmt
            for expr in [*stmt.bases, *stmt.decorator_list]:
                self._expr(expr, ctx)
            self._block(stmt.body, Ctx(func=FuncInfo("<class>", stmt, stmt.name)))
            return ctx
        if isinstance(stmt, ast.If):
            return self._if(stmt, ctx)
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            it = stmt.test if isinstance(stmt, ast.While) else stmt.iter
            nodes = self._expr(it, ctx)
            target = dotted(stmt.target) if not isinstance(stmt, ast.While) else None
            names = frozenset(filter(None, (dotted(n) for n in nodes if isinstance(n, (ast.Name, ast.Attribute)))))
            self.loops.append(LoopInfo(stmt, ctx, target, names))
            inner = ctx.but(loops=ctx.loops + (stmt,))
            self._block(stmt.body, inner)
            self._block(stmt.orelse, ctx)
            return ctx
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            names = []
            for item in stmt.items:
                self._expr(item.context_expr, ctx)
                expr = item.context_expr
                names.append(self.qual(expr.func if isinstance(expr, ast.Call) else expr) or "?")
            inner = ctx.but(withs=ctx.withs + tuple(names))
            after = self._block(stmt.body, inner)
            # an early return inside the with still guards what follows it
            return ctx.but(sides=after.sides)
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self._block(stmt.body, ctx)
            for handler in stmt.handlers:
                self._block(handler.body, ctx)
            self._block(stmt.orelse, ctx)
            self._block(stmt.finalbody, ctx)
            return ctx
        if type(stmt).__name__ == "Match":
            self._expr(stmt.subject, ctx)
            for case in stmt.cases:
                self._block(case.body, ctx)
            return ctx
        return self._simple(stmt, ctx)

    def _simple(self, stmt: ast.stmt, ctx: Ctx) -> Ctx:
        """Index a statement holding no block (an expression, an assignment, a return ...)."""
        self._expr(stmt, ctx)
        if isinstance(stmt, ast.Expr) and id(stmt.value) in self._call_by_node:
            self._call_by_node[id(stmt.value)].discarded = True
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                text = dotted(target)
                if text:
                    self.bindings.setdefault(text, []).append(Binding(text, stmt.value, stmt.lineno, ctx.func, ctx))
                    site = self._call_by_node.get(id(stmt.value))
                    if site is not None:
                        site.assigned_to = text
                elif isinstance(target, (ast.Tuple, ast.List)):
                    site = self._call_by_node.get(id(stmt.value))
                    if site is not None:
                        site.unpacked_to = tuple(dotted(e) for e in target.elts)
        return ctx

    def _new_branch(self) -> int:
        self.branch_ids += 1
        return self.branch_ids

    def _if(self, stmt: ast.If, ctx: Ctx) -> Ctx:
        nodes = self._expr(stmt.test, ctx)
        test = stmt.test
        sides = self.classify(test)
        if sides is None:  # ``single_gpu = rank == -1 and n > 1`` then ``if single_gpu:``: the test it holds
            test = self.flag_test(test, stmt.lineno, ctx.func) or test
            sides = self.classify(test) if test is not stmt.test else None
        if test is not stmt.test:
            nodes = walk(test, operators=False)
        dist = ctx.dist_branch or _mentions(nodes, self.P.distributed_flag_words) or self._distributed_predicate(
            test) or (
            sides is None and self.guards.mentions_rank(test, nodes)) or self._pinned_when_distributed(test, stmt)
        optional = ctx.optional or (sides is None and not dist)
        if dist:
            self.distributed_ifs.append(stmt)
        bid = self._new_branch()
        body_sides = ctx.sides + ((bid, sides[0], 0),) if sides else ctx.sides
        else_sides = ctx.sides + ((bid, sides[1], 1),) if sides else ctx.sides
        after_body = self._block(stmt.body, ctx.but(sides=body_sides, dist_branch=dist, optional=optional))
        after_else = self._block(stmt.orelse, ctx.but(sides=else_sides, dist_branch=dist, optional=optional))
        if sides and _terminal(stmt.body) and not _terminal(stmt.orelse):
            return ctx.but(sides=else_sides)
        if sides and _terminal(stmt.orelse) and not _terminal(stmt.body):
            return ctx.but(sides=body_sides)  # ``if rank == 0: pass / else: return``: what follows is rank 0's
        depth = len(ctx.sides)
        if sides is None and (len(after_body.sides) > depth or len(after_else.sides) > depth) and _tests_flag(
                test, self.P.distributed_flag_words):  # an arm ending in a rank test first: most arms do not
            # ``if distributed: gather(...); if not is_main(): return`` (else: the one-process path): what follows
            # runs on rank 0 only in a distributed run (the arm with the rank-0 return is the distributed one)
            for after, other in ((after_body, stmt.orelse), (after_else, stmt.body)):
                new = after.sides[len(ctx.sides):]
                if new and all(side == RANK0 for _, side, _ in new) and not _terminal(other):
                    return ctx.but(sides=after.sides)
        return ctx

    def _distributed_predicate(self, test: ast.AST) -> bool:
        """``if ready():`` where ``ready`` is a local function taking no argument whose every test and non-literal
        return reads the distributed state (a ``torch.distributed`` query such as ``dist.is_available()``, or a
        distributed flag word: ``is_initialized``, the world size): a "distributed or not" flag whatever the
        function is called."""
        test = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and not test.args):
            return False
        infos = self.functions.get(test.func.id, ())
        if len(infos) != 1 or infos[0].cls is not None or infos[0].node.args.args:
            return False
        parts = [n.test for n in ast.walk(infos[0].node) if isinstance(n, ast.If)] + [
            n.value for n in ast.walk(infos[0].node)
            if isinstance(n, ast.Return) and n.value is not None and not isinstance(n.value, ast.Constant)]
        words = self.P.distributed_flag_words

        def reads_distributed_state(part: ast.AST) -> bool:
            nodes = walk(part, operators=False)
            return _mentions(nodes, words) or any(
                isinstance(n, ast.Call) and self.qual(n.func).startswith("torch.distributed.") for n in nodes)

        return bool(parts) and all(reads_distributed_state(part) for part in parts)

    def _pinned_when_distributed(self, test: ast.AST, stmt: ast.If) -> bool:
        """The test is decided by a name the distributed arm of an earlier ``if`` binds to a literal (``if
        args.distributed: args.num_gpu = 1`` then ``if args.num_gpu > 1: DataParallel(...)``): its arms are told apart
        by whether the run is distributed, like the flag itself. Not ``if num_gpus > 1 or device_count() > 1:``,
        which holds in a distributed run too."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._pinned_when_distributed(test.operand, stmt)
        if isinstance(test, ast.BoolOp):
            decided = [self._pinned_when_distributed(v, stmt) for v in test.values]
            return any(decided) if isinstance(test.op, ast.And) else all(decided)
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
            test = test.left
        if test.__class__ is not _NAME and test.__class__ is not _ATTRIBUTE:
            return False
        return any(b.ctx.dist_branch and b.line < stmt.lineno and isinstance(b.value, ast.Constant)
                   for b in self.bindings.get(dotted(test) or "", ()))

    def flag_test(self, test: ast.AST, line: int, func: FuncInfo | None) -> ast.AST | None:
        """The comparison a local flag (or ``not flag``) was bound to, when the function binds it exactly once,
        before ``line``."""
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        name = test.operand if negated else test
        if name.__class__ is not _NAME:
            return None
        bound = [b for b in self.bindings.get(name.id, ()) if b.func is func]
        if len(bound) != 1 or bound[0].line >= line or bound[0].value.__class__ not in _TESTS:
            return None
        return ast.UnaryOp(ast.Not(), bound[0].value) if negated else bound[0].value

    def _mark_ifexp_arms(self) -> None:
        """Calls in an arm of ``x if <rank test> else y`` run on that arm's ranks only."""
        for node in self.ifexps:
            sides = self.classify(node.test)
            if not sides:
                continue
            bid = self._new_branch()
            for arm, (side, part) in enumerate(zip(sides, (node.body, node.orelse))):
                for sub in walk(part):
                    if isinstance(sub, ast.Call):
                        self._ifexp_sides.setdefault(id(sub), (bid, side, arm))

    def _expr(self, root: ast.AST, ctx: Ctx) -> list[ast.AST]:
        load, strings, arms, calls = self._loads.append, self.strings, self._ifexp_sides, self.calls
        by_node = self._call_by_node
        signatures = self.P.signatures
        nodes = walk(root, operators=False)
        for node in nodes:
            kind = node.__class__
            if kind is _NAME or kind is _ATTRIBUTE:
                if node.ctx.__class__ is _LOAD:
                    load(node)
            elif kind is _CALL:
                func = node.func
                text = dotted(func)  # a chain of names, or None: then so is the receiver's (the same base)
                name = self._qual_text(text) if text else ""
                if func.__class__ is _ATTRIBUTE:
                    recv, method = text.rpartition(".")[0] if text else None, func.attr
                else:
                    recv, method = None, last(name)
                arm = arms.get(id(node))
                site = CallSite(node, name, method, recv, ctx if arm is None else ctx.but(sides=ctx.sides + (arm,)),
                                params=signatures.get(name, ()))
                calls.append(site)
                by_node[id(node)] = site
            elif kind is _CONSTANT and node.value.__class__ is str and len(node.value) < 200:
                strings.add(node.value)
        return nodes

    @property
    def loaded(self) -> Counter:
        """Dotted names read anywhere -> how often (counted when first asked: most scans never ask)."""
        if self._loaded is None:
            self._loaded = Counter()
            count = self._loaded.get
            for node in self._loads:
                text = node.id if node.__class__ is _NAME else dotted(node)
                if text:
                    self._loaded[text] = count(text, 0) + 1
        return self._loaded

    # ---- rank-guard recognition (delegated to guards.RankLogic) -------------------------------
    def is_rank_expr(self, node: ast.AST) -> bool:
        """``rank``, ``args.local_rank``, ``dist.get_rank()``, a name assigned from a rank ..."""
        return self.guards.is_rank_expr(node)

    def is_main_flag(self, node: ast.AST) -> bool:
        """``is_main_process()``, ``args.is_master``, a flag or predicate derived from a rank-0 test ..."""
        return self.guards.is_main_flag(node)

    def classify(self, test: ast.AST) -> tuple[str, str] | None:
        """(side of the body, side of the else) when ``test`` depends on the rank, else None."""
        return self.guards.classify(test)

    # ---- queries ----------------------------------------------------------------------------
    def calls_to(self, names: Iterable[str]) -> list[CallSite]:
        """Calls matching ``names``: a dotted name matches the qualified name, a bare one the method name."""
        full = frozenset(n for n in names if "." in n)
        bare = frozenset(n for n in names if "." not in n)
        return [c for c in self.calls if c.name in full or c.method in bare]

    def calls_named(self, names: Iterable[str]) -> list[CallSite]:
        """Calls whose qualified name is exactly one of ``names``, in the order of ``calls`` (found through a map
        from name to positions: the checkers ask with the same pattern lists again and again)."""
        by_name = self._positions_by_name
        if by_name is None:
            by_name = self._positions_by_name = {}
            for position, site in enumerate(self.calls):
                by_name.setdefault(site.name, []).append(position)
        unique = names if isinstance(names, (set, frozenset)) else set(names)
        found = [by_name[name] for name in unique if name in by_name]
        if not found:
            return []
        calls = self.calls
        return [calls[i] for i in (found[0] if len(found) == 1 else sorted(i for p in found for i in p))]

    def methods(self, method: str, recv: str | None = None) -> list[CallSite]:
        """Method calls ``<recv>.<method>(...)`` (any receiver when ``recv`` is None), in file order; the calls are
        grouped by method once per module (checkers ask per wrap, per site)."""
        by_method = self._by_method
        if by_method is None:
            by_method = self._by_method = {}
            for c in self.calls:
                if c.recv is not None:
                    by_method.setdefault(c.method, []).append(c)
        found = by_method.get(method, [])
        return [c for c in found if c.recv == recv] if recv is not None else list(found)

    def binding(self, target: str, before: int, func: FuncInfo | None) -> Binding | None:
        """The last ``target = ...`` before line ``before`` in ``func``, else the last module-level one."""
        found = [b for b in self.bindings.get(target, ()) if b.line < before and b.func is func]
        if not found and func is not None:
            found = [b for b in self.bindings.get(target, ()) if b.func is None]
        return max(found, key=lambda b: b.line) if found else None

    def value_call(self, node: ast.AST | None, before: int, func: FuncInfo | None) -> CallSite | None:
        """The call that produced ``node``: the node itself, or the call last assigned to that name."""
        if isinstance(node, ast.Call):
            return self._call_by_node.get(id(node))
        text = dotted(node)
        if text:
            b = self.binding(text, before, func)
            if b is not None and isinstance(b.value, ast.Call):
                return self._call_by_node.get(id(b.value))
        return None

    def site_of(self, node: ast.Call) -> CallSite | None:
        """The CallSite of a Call node."""
        return self._call_by_node.get(id(node))

    def nodes_in(self, node: ast.AST) -> list[ast.AST]:
        """Every node under ``node`` (itself first) but expression contexts and operators (``Load``, ``Add``...: read
        them through their parent, ``isinstance(n.op, ast.Mod)``), in :func:`walk` order, walked once per node: the
        checkers ask about the same loops and functions again and again."""
        found = self._nodes_in.get(id(node))
        if found is None:
            found = self._nodes_in[id(node)] = walk(node, operators=False)
        return found

    def nodes_of(self, kind: type) -> list[ast.AST]:
        """The module's nodes of class ``kind`` (``ast.Assign``...; not expression contexts nor operators), in
        :func:`walk` order: the whole tree sorted by class once, for checkers that look for one kind of node anywhere
        in the file (a walk of the whole module per question made them quadratic in large files)."""
        by_class = self._nodes_of
        if by_class is None:
            by_class = self._nodes_of = {}
            for node in self.nodes_in(self.tree):
                found = by_class.get(node.__class__)
                if found is None:
                    by_class[node.__class__] = [node]
                else:
                    found.append(node)
        return by_class.get(kind, [])

    def sites_in(self, node: ast.AST) -> list[CallSite]:
        """Calls lexically inside ``node`` (found once per node)."""
        found = self._sites_in.get(id(node))
        if found is None:
            found = self._sites_in[id(node)] = [  # only a call node has a site
                site for site in map(self._call_by_node.get, map(id, self.nodes_in(node))) if site is not None]
        return found

    def mentions_rank(self, node: ast.AST) -> bool:
        """True when any part of ``node`` is a rank expression."""
        return self.guards.mentions_rank(node)

    def rank0_first(self, site: CallSite) -> bool:
        """The call runs on rank 0 first and on the other ranks only after it (``with torch_distributed_zero_first(
        rank):``, ``accelerator.main_process_first()``, directly or through every caller): not concurrently."""
        return _under_rank0_first(site, self.P, self.rank0_first_contexts) or bool(site.func and site.func.rank0_first)

    def in_spawning_parent(self, site: CallSite) -> bool:
        """The call runs in the process that starts the workers (``mp.spawn(worker, ...)``), not in the workers:
        it sits in the function that calls the spawner, or in the same ``if __name__ == "__main__":`` block (a
        spawned child re-imports the module but does not run that block). Once per node, whatever the world size."""
        spawns = [s for s in self.calls_named(self.P.spawners) if s.ctx.func is site.ctx.func]
        if site.ctx.func is not None:
            return bool(spawns)
        return any(is_main_block(stmt) and _inside(stmt, site.node.lineno) and any(
            _inside(stmt, s.line) for s in spawns) for stmt in self.tree.body)

    def is_training_loop(self, loop: ast.AST) -> bool:
        """True when the loop itself (not a loop nested in it) steps an optimizer or runs a backward pass, directly
        or through a local function: a line printed there is printed every step (not any ``for``)."""
        key = id(loop)
        if key not in self._training_loops:
            if self._by_loop is None:  # the calls of each loop's own body, grouped once (no walk per loop)
                self._by_loop = {}
                for site in self.calls:
                    if site.ctx.loops:
                        self._by_loop.setdefault(id(site.ctx.loops[-1]), []).append(site)
            sites = self._by_loop.get(key, ())
            callees = [f for s in sites if s.method in self.functions and (s.recv in (None, "self"))
                       for f in self.functions[s.method]]
            self._training_loops[key] = any(self._steps(s) for s in sites) or any(
                self._steps(s) and not s.ctx.loops for f in callees for s in self.sites_in(f.node))
        return self._training_loops[key]

    def _steps(self, site: CallSite) -> bool:
        return self.P.matches("training_step_calls", f"{last(site.recv)}.{site.method}" if site.recv else site.method)

    def reachable(self, line: int) -> bool:
        """False for a line inside a function that nothing in the project calls or names."""
        if self._dead is None:
            project = self.project
            self._dead = [] if project is None else [
                (f.node.lineno, f.node.end_lineno or f.node.lineno) for infos in self.functions.values()
                for f in infos if not project.is_called(f.name, self.path if f.module_level else None)]
            if project is not None and project.is_helper(self.path):  # a helper's own ``__main__`` block
                self._dead += [(s.lineno, s.end_lineno or s.lineno) for s in self.tree.body
                               if is_main_block(s)]
        return not any(start <= line <= end for start, end in self._dead)

    @property
    def uses_ddp(self) -> bool:
        """The file runs raw torch.distributed training (init, DDP wrap or DistributedSampler)."""
        P = self.P
        return bool(self.call_names & (P.ddp_wrappers | P.init_process_group | P.distributed_samplers))


_TESTS = (ast.Compare, ast.BoolOp, ast.UnaryOp)


def _inside(stmt: ast.stmt, line: int) -> bool:
    return stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)


def _terminal(body: list[ast.stmt]) -> bool:
    """The block leaves (a ``return``, ``raise``, ``continue``, ``break`` or ``exit()`` last)."""
    return bool(body) and isinstance(body[-1], TERMINAL) or (
        bool(body) and isinstance(body[-1], ast.Expr) and isinstance(body[-1].value, ast.Call)
        and last(dotted(body[-1].value.func)) in ("exit", "_exit"))


def _mentions(nodes: list[ast.AST], words: Iterable[str]) -> bool:
    """Some name or attribute among ``nodes`` (a test's, walked once) holds one of ``words``."""
    for sub in nodes:
        text = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute) else None
        if text:
            text = text.lower()
            if any(w in text for w in words):
                return True
    return False



def _tests_flag(test: ast.AST, words: Iterable[str]) -> bool:
    """The test is on a distributed flag itself (``args.distributed``, ``not self._distributed``,
    ``dist.is_initialized()``, ``world_size > 1``), not on a setting of an object named like one
    (``fsdp_plugin.state_dict_type == FULL_STATE_DICT``: its arms are settings, not the one-process path)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _tests_flag(test.operand, words)
    if isinstance(test, ast.BoolOp):
        return any(_tests_flag(v, words) for v in test.values)
    if isinstance(test, ast.Compare):
        return all(const(c, default=...) is not ... for c in test.comparators) and _tests_flag(test.left, words)
    if isinstance(test, ast.Call):
        return _tests_flag(test.func, words)
    flag = last(dotted(test)).lower()
    return bool(flag) and any(w in flag for w in words)


def propagate_rank0(indexes: list["ModuleIndex"]) -> None:
    """A function (or every method of a class) all of whose call sites, in the modules of the scan, run on
    rank 0 only runs on rank 0 only. A bare call ``f()`` in a module that defines its own top-level ``f`` calls
    that one, not a namesake in another module."""
    defs: dict[str, list[tuple[int, FuncInfo]]] = {}
    own: list[set[str]] = []  # per index: its top-level function names
    for position, index in enumerate(indexes):
        own.append({name for name, infos in index.functions.items() if any(i.module_level for i in infos)})
        for name, infos in index.functions.items():
            defs.setdefault(name, []).extend((position, i) for i in infos)
            for info in infos:
                if info.cls:
                    defs.setdefault(info.cls, []).append((position, info))  # constructing the class runs its methods
    sites: dict[str, list[tuple[int, CallSite]]] = {}
    for position, index in enumerate(indexes):
        local = index.project.local_modules if index.project is not None else ()
        for site in index.calls:
            if site.method in defs and (site.recv in (None, "self") or index.aliases.get(site.recv) in local
                                        or site.method[:1].isupper() or _local_instance(index, site)):
                sites.setdefault(site.method, []).append((position, site))
        for name, inner in _callback_calls(index, defs):
            sites.setdefault(name, []).append((position, inner))
    P = indexes[0].P if indexes else None
    contexts = frozenset(name for index in indexes for name in _rank0_first_managers(index))
    for index in indexes:
        index.rank0_first_contexts = contexts
    callers_of: list[tuple[FuncInfo, list[CallSite]]] = []
    for name, infos in defs.items():
        for owner, info in infos:
            callers = [s for where, s in sites.get(name, ()) if not (
                s.recv is None and info.module_level and where != owner and name in own[where])]
            if callers:
                callers_of.append((info, callers))
    for _ in range(3):
        for info, callers in callers_of:
            if all(s.rank0 for s in callers):
                info.rank0 = True
            if all(_under_rank0_first(s, P, contexts) or (s.func and s.func.rank0_first) for s in callers):
                info.rank0_first = True


def _callback_calls(index: "ModuleIndex", defs: dict) -> list[tuple[str, CallSite]]:
    """(function name, call) for a function handed to a local helper that calls it through its parameter:
    ``run_on_main(self.save)`` with ``def run_on_main(func): if is_main(): func()`` calls ``save`` where it calls
    ``func``, so ``save`` runs on rank 0 only when those calls do."""
    out = []
    by_name: dict[tuple[int, str], list[CallSite]] | None = None  # (function, called bare name) -> calls, in order
    for site in index.calls:
        infos = index.functions.get(site.method, ())
        if len(infos) != 1 or site.recv not in (None, "self"):
            continue
        helper = infos[0]
        params = [a.arg for a in helper.node.args.args]
        if params[:1] in (["self"], ["cls"]):
            params = params[1:]
        bound = list(zip(params, site.node.args)) + [(k.arg, k.value) for k in site.node.keywords if k.arg]
        for param, value in bound:
            text = dotted(value)
            if not text or text.count(".") > 1 or (text.count(".") == 1 and not text.startswith("self.")):
                continue
            name = last(text)
            if name not in defs or name == site.method:
                continue
            if by_name is None:
                by_name = {}
                for inner in index.calls:
                    if inner.recv is None and isinstance(inner.node.func, ast.Name):
                        by_name.setdefault((id(inner.ctx.func), inner.method), []).append(inner)
            out += [(name, inner) for inner in by_name.get((id(helper), param), ())]
    return out


def _local_instance(index: "ModuleIndex", site: CallSite) -> bool:
    """``trainer.save(...)`` where ``trainer = Trainer(...)`` (a class of this module) in the same function."""
    if not site.recv or "." in site.recv:
        return False
    binding = index.binding(site.recv, site.line, site.func)
    made = index.site_of(binding.value) if binding is not None and isinstance(binding.value, ast.Call) else None
    return made is not None and made.recv is None and made.method in index.classes


def _under_rank0_first(site: CallSite, P: Patterns, local: frozenset[str] = frozenset()) -> bool:
    return any(last(w) in P.rank_zero_first_contexts or last(w) in local for w in site.ctx.withs)


def _rank0_first_managers(index: "ModuleIndex") -> list[str]:
    """The module's own context managers that let rank 0 through first, whatever their name: a ``@contextmanager``
    function that waits at a barrier under a test before its ``yield`` (the other ranks) and releases under a test
    after it (rank 0) - ``torch_distributed_zero_first(local_rank)`` and its copies."""
    found = []
    for name, infos in index.functions.items():
        for info in infos:
            node = info.node
            if not any(last(dotted(d.func if isinstance(d, ast.Call) else d)) == "contextmanager"
                       for d in node.decorator_list):
                continue
            at = next((i for i, stmt in enumerate(node.body) if isinstance(stmt, ast.Expr)
                       and isinstance(stmt.value, (ast.Yield, ast.YieldFrom))), None)
            if at is not None and _barrier_under_test(index, node.body[:at]) and _barrier_under_test(
                    index, node.body[at + 1:]):
                found.append(name)
    return found


def _barrier_under_test(index: "ModuleIndex", stmts: list[ast.stmt]) -> bool:
    return any(isinstance(stmt, ast.If) and any(
        isinstance(n, ast.Call) and last(dotted(n.func)) in index.P.barrier_methods for n in walk(stmt))
        for stmt in stmts)


def is_main_block(stmt: ast.stmt) -> bool:
    """``if __name__ == "__main__":``"""
    return isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare) and dotted(stmt.test.left) == "__name__"
