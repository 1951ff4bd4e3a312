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
from typing import Iterable, Iterator

from troubleshooter.scan.patterns import Patterns

RANK0, NONZERO, RANKDEP = "rank0", "nonzero", "rank"


def dotted(node: ast.AST | None) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def last(name: str | None) -> str:
    """The last segment of a dotted name."""
    return (name or "").rpartition(".")[2]


def const(node: ast.AST | None, default=None):
    """The value of a literal (numbers, strings, True/False/None, tuples/lists of those)."""
    if node is None:
        return default
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return default


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
    sites: list["CallSite"] = field(default_factory=list)


@dataclass(frozen=True)
class Ctx:
    """Where a statement sits: function, rank-dependent branches, loops, ``with`` blocks."""

    func: FuncInfo | None = None
    sides: tuple = ()  # ((branch_id, side, arm), ...) per enclosing rank-dependent branch; arm 0 body, 1 else
    loops: tuple = ()
    withs: tuple = ()
    dist_branch: bool = False  # under an ``if`` on a distributed flag (``if args.distributed``)


@dataclass(eq=False)
class CallSite:
    """One call in the module with its resolved name and context."""

    node: ast.Call
    name: str  # qualified name ("torch.nn.parallel.DistributedDataParallel"), or "" when unknown
    method: str  # last segment of the called name ("to", "set_epoch")
    recv: str | None  # dotted receiver of a method call ("model" in model.to(d)), else None
    ctx: Ctx
    assigned_to: str | None = None  # ``x = call(...)``: "x"
    discarded: bool = False  # a bare expression statement: the result is thrown away

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
        return any(entry[1] == RANK0 for entry in self.ctx.sides) or bool(self.ctx.func and self.ctx.func.rank0)

    @property
    def rank_conditional(self) -> bool:
        """Runs on some ranks only."""
        return bool(self.ctx.sides)

    def kw(self, name: str) -> ast.AST | None:
        """The value of keyword argument ``name``, or None."""
        for keyword in self.node.keywords:
            if keyword.arg == name:
                return keyword.value
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

    def __init__(self, tree: ast.Module, text: str, path: str, patterns: Patterns):
        self.tree, self.text, self.path, self.P = tree, text, path, patterns
        self.aliases: dict[str, str] = {}
        self.local_defs: set[str] = set()
        self.calls: list[CallSite] = []
        self.bindings: dict[str, list[Binding]] = {}
        self.loops: list[LoopInfo] = []
        self.functions: dict[str, list[FuncInfo]] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.loaded: Counter = Counter()  # dotted names read anywhere
        self.strings: set[str] = set()
        self.branch_ids = 0
        self._call_by_node: dict[int, CallSite] = {}
        self._collect_imports(tree)
        self._block(tree.body, Ctx())
        self._propagate_rank0()
        self.call_names = frozenset(c.name for c in self.calls if c.name)

    # ---- imports and names -----------------------------------------------------------------
    def _collect_imports(self, tree: ast.Module) -> None:
        stars = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
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
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.local_defs.add(node.name)
        if stars:
            for key in ("ddp_wrappers", "dataloaders", "distributed_samplers", "dataparallel"):
                for qual in getattr(self.P, key):
                    module, _, name = qual.rpartition(".")
                    if module in stars:
                        self.aliases.setdefault(name, qual)

    def qual(self, node: ast.AST | None) -> str:
        """Qualified name of a Name/Attribute chain after following imports ("" if not a chain)."""
        text = dotted(node)
        if not text:
            return ""
        head, dot, rest = text.partition(".")
        if head in self.aliases and head not in self.local_defs:
            return self.aliases[head] + dot + rest
        return text

    # ---- the single pass -------------------------------------------------------------------
    def _block(self, stmts: list[ast.stmt], ctx: Ctx) -> None:
        for stmt in stmts:
            ctx = self._stmt(stmt, ctx)

    def _stmt(self, stmt: ast.stmt, ctx: Ctx) -> Ctx:
        """Index one statement; return the context for the statements after it (early returns)."""
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            cls = ctx.func.cls if ctx.func and ctx.func.name == "<class>" else None
            info = FuncInfo(stmt.name, stmt, cls)
            self.functions.setdefault(stmt.name, []).append(info)
            for expr in [*stmt.decorator_list, *stmt.args.defaults, *stmt.args.kw_defaults]:
                if expr is not None:
                    self._expr(expr, ctx)
            sides = ()
            if any(last(dotted(d.func if isinstance(d, ast.Call) else d)) in self.P.rank_zero_decorators
                   for d in stmt.decorator_list):
                sides = ((self._new_branch(), RANK0, 0),)
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
            self._expr(stmt.iter if not isinstance(stmt, ast.While) else stmt.test, ctx)
            target = dotted(stmt.target) if not isinstance(stmt, ast.While) else None
            it = stmt.test if isinstance(stmt, ast.While) else stmt.iter
            names = frozenset(filter(None, (dotted(n) for n in ast.walk(it) if isinstance(n, (ast.Name, ast.Attribute)))))
            self.loops.append(LoopInfo(stmt, ctx, target, names))
            inner = Ctx(ctx.func, ctx.sides, ctx.loops + (stmt,), ctx.withs, ctx.dist_branch)
            self._block(stmt.body, inner)
            self._block(stmt.orelse, ctx)
            return ctx
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            names = []
            for item in stmt.items:
                self._expr(item.context_expr, ctx)
                expr = item.context_expr
                names.append(self.qual(expr.func if isinstance(expr, ast.Call) else expr) or "?")
            inner = Ctx(ctx.func, ctx.sides, ctx.loops, ctx.withs + tuple(names), ctx.dist_branch)
            after = self._block_ctx(stmt.body, inner)
            # an early return inside the with still guards what follows it
            return Ctx(ctx.func, after.sides, ctx.loops, ctx.withs, ctx.dist_branch)
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
        return ctx

    def _block_ctx(self, stmts: list[ast.stmt], ctx: Ctx) -> Ctx:
        for stmt in stmts:
            ctx = self._stmt(stmt, ctx)
        return ctx

    def _new_branch(self) -> int:
        self.branch_ids += 1
        return self.branch_ids

    def _if(self, stmt: ast.If, ctx: Ctx) -> Ctx:
        self._expr(stmt.test, ctx)
        sides = self.classify(stmt.test)
        dist = ctx.dist_branch or _mentions(stmt.test, self.P.distributed_flag_words) or (
            sides is None and self.mentions_rank(stmt.test))
        bid = self._new_branch()
        body_sides = ctx.sides + ((bid, sides[0], 0),) if sides else ctx.sides
        else_sides = ctx.sides + ((bid, sides[1], 1),) if sides else ctx.sides
        self._block(stmt.body, Ctx(ctx.func, body_sides, ctx.loops, ctx.withs, dist))
        self._block(stmt.orelse, Ctx(ctx.func, else_sides, ctx.loops, ctx.withs, dist))
        if sides and _terminal(stmt.body) and not stmt.orelse:
            return Ctx(ctx.func, else_sides, ctx.loops, ctx.withs, ctx.dist_branch)
        return ctx

    def _expr(self, root: ast.AST, ctx: Ctx) -> None:
        for node in ast.walk(root):
            if isinstance(node, ast.Call):
                func = node.func
                name = self.qual(func)
                recv = dotted(func.value) if isinstance(func, ast.Attribute) else None
                method = func.attr if isinstance(func, ast.Attribute) else last(name)
                site = CallSite(node, name, method, recv, ctx)
                self.calls.append(site)
                self._call_by_node[id(node)] = site
            elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
                text = dotted(node)
                if text:
                    self.loaded[text] += 1
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
                self.strings.add(node.value)

    def _propagate_rank0(self) -> None:
        """A local function all of whose call sites run on rank 0 only runs on rank 0 only."""
        for site in self.calls:
            target = None
            if isinstance(site.node.func, ast.Name) and site.node.func.id in self.functions:
                target = site.node.func.id
            elif site.recv == "self" and site.method in self.functions:
                target = site.method
            if target:
                for info in self.functions[target]:
                    info.sites.append(site)
        for _ in range(3):
            for infos in self.functions.values():
                for info in infos:
                    if info.sites and not info.rank0:
                        info.rank0 = all(s.rank0 for s in info.sites)

    # ---- rank-guard recognition -------------------------------------------------------------
    def is_rank_expr(self, node: ast.AST) -> bool:
        """``rank``, ``args.local_rank``, ``dist.get_rank()``, ``int(os.environ["RANK"])`` ..."""
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "int" and node.args:
                return self.is_rank_expr(node.args[0])
            return last(dotted(node.func)) in self.P.rank_names
        if isinstance(node, ast.Subscript):
            key = const(node.slice)
            return isinstance(key, str) and key in self.P.rank_names
        text = dotted(node)
        return bool(text) and last(text) in self.P.rank_names

    def is_main_flag(self, node: ast.AST) -> bool:
        """``is_main_process()``, ``args.is_master``, ``trainer.is_global_zero`` ..."""
        target = node.func if isinstance(node, ast.Call) else node
        return last(dotted(target)) in self.P.main_process_names

    def classify(self, test: ast.AST) -> tuple[str, str] | None:
        """(side of the body, side of the else) when ``test`` depends on the rank, else None."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.classify(test.operand)
            return (inner[1], inner[0]) if inner else None
        if isinstance(test, ast.BoolOp):
            parts = [self.classify(v) for v in test.values]
            if not any(parts):
                return None
            if isinstance(test.op, ast.And):
                return (RANK0, RANKDEP) if any(p and p[0] == RANK0 for p in parts) else (RANKDEP, RANKDEP)
            return (RANK0, NONZERO) if all(p and p[0] == RANK0 for p in parts) else (RANKDEP, RANKDEP)
        if self.is_main_flag(test):
            return (RANK0, NONZERO)
        if self.is_rank_expr(test):  # ``if rank:`` is true off rank 0
            return (NONZERO, RANK0)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, op, right = test.left, test.ops[0], test.comparators[0]
            if self.is_main_flag(left) and isinstance(op, (ast.Eq, ast.Is)) and const(right) is True:
                return (RANK0, NONZERO)
            if not self.is_rank_expr(left):
                if self.is_rank_expr(right) and isinstance(op, (ast.Eq, ast.NotEq)):
                    left, right = right, left
                elif _mod_of_rank(self, left):
                    return (RANKDEP, RANKDEP)
                else:
                    return None
            value = const(right, default=...)
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(value, (tuple, list, set)) and value:
                zero_only = all(isinstance(v, int) and v <= 0 for v in value)
                side = (RANK0, NONZERO) if zero_only else (RANKDEP, RANKDEP)
                return side if isinstance(op, ast.In) else (side[1], side[0])
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                return None  # ``rank is None`` / ``local_rank != -1`` mean "distributed or not", same on every rank
            table = {ast.Eq: value == 0, ast.LtE: value == 0, ast.Lt: value == 1}
            if type(op) in table and table[type(op)]:
                return (RANK0, NONZERO)
            table = {ast.NotEq: value == 0, ast.Gt: value == 0, ast.GtE: value == 1}
            if type(op) in table and table[type(op)]:
                return (NONZERO, RANK0)
            return (RANKDEP, RANKDEP)
        return None

    # ---- queries ----------------------------------------------------------------------------
    def calls_to(self, names: Iterable[str]) -> list[CallSite]:
        """Calls matching ``names``: a dotted name matches the qualified name, a bare one the method name."""
        full = frozenset(n for n in names if "." in n)
        bare = frozenset(n for n in names if "." not in n)
        return [c for c in self.calls if c.name in full or c.method in bare]

    def calls_named(self, names: Iterable[str]) -> list[CallSite]:
        """Calls whose qualified name is exactly one of ``names``."""
        names = frozenset(names)
        return [c for c in self.calls if c.name in names]

    def methods(self, method: str, recv: str | None = None) -> list[CallSite]:
        """Method calls ``<recv>.<method>(...)`` (any receiver when ``recv`` is None)."""
        return [c for c in self.calls if c.method == method and c.recv is not None and (recv is None or c.recv == recv)]

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

    def sites_in(self, node: ast.AST) -> Iterator[CallSite]:
        """Calls lexically inside ``node``."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                site = self._call_by_node.get(id(sub))
                if site is not None:
                    yield site

    def mentions_rank(self, node: ast.AST) -> bool:
        """True when any part of ``node`` is a rank expression."""
        return any(self.is_rank_expr(n) for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute, ast.Call,
                                                                                     ast.Subscript)))

    @property
    def uses_ddp(self) -> bool:
        """The file runs raw torch.distributed training (init, DDP wrap or DistributedSampler)."""
        P = self.P
        return bool(self.call_names & (P.ddp_wrappers | P.init_process_group | P.distributed_samplers))


def _terminal(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break)) or (
        bool(body) and isinstance(body[-1], ast.Expr) and isinstance(body[-1].value, ast.Call)
        and last(dotted(body[-1].value.func)) in ("exit", "_exit"))


def _mentions(node: ast.AST, words: Iterable[str]) -> bool:
    for sub in ast.walk(node):
        text = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute) else None
        if text and any(w in text.lower() for w in words):
            return True
    return False


def _mod_of_rank(index: ModuleIndex, node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and index.is_rank_expr(node.left)
