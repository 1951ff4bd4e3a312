"""Set-up helpers of local modules read where they are called.

``model, loader = setup_ddp(args, net)`` where ``setup_ddp`` is a function of a local module the file imports
(``from utils import setup_ddp``, ``import dist_utils as du``, ``from .engine import build_loader``): the file is
indexed as if the helper's body stood right after that statement, its parameters bound to the arguments and its
returned values to the call's targets. Every checker then judges the set-up in the context it runs in (inside the
training function, under the caller's rank branches), whether the file is scanned alone or with its directory.

Helper modules are parsed, never imported, each once per scan; a module that is missing or does not parse is
simply unknown. Only a plain function qualifies: defined once at the helper module's top level, no nested
definitions, no ``yield``/``global``, a ``return`` only as its last statement, and holding a word some checker
looks for (a DataLoader, a DDP wrap, ``set_device`` ...).

Lines: the expanded file's lines are scaled by :data:`SCALE` (line ``n`` becomes ``n * SCALE``) and the inlined
statements take the lines just after the call statement's, so "before"/"after" keep their meaning; a hit is
reported back at the helper's own file and line (:meth:`Expansion.place`).
"""

from __future__ import annotations

import ast
import copy
import os
import re
from dataclasses import dataclass, field

from troubleshooter.scan.guards import dotted, walk
from troubleshooter.scan.source import parse_python

SCALE = 1000  # scaled lines per source line: a helper longer than this is not inlined
_CALL_STATEMENTS = (ast.Expr, ast.Assign, ast.AnnAssign)
_BLOCKS = {ast.FunctionDef: ("body",), ast.AsyncFunctionDef: ("body",), ast.ClassDef: ("body",), ast.If: ("body", "orelse"),
           ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"), ast.While: ("body", "orelse"),
           ast.With: ("body",), ast.AsyncWith: ("body",), ast.Try: ("body", "orelse", "finalbody"),
           ast.ExceptHandler: ("body",)}
# node classes that carry a position (every statement and expression, arguments, keywords ...)
_POSITIONED = frozenset(k for k in vars(ast).values() if isinstance(k, type) and issubclass(k, ast.AST)
                        and "lineno" in k._attributes)
_LINE_MENTION = re.compile(r"\bline (\d{4,})\b")  # a scaled line in a message (a source line times SCALE)
_TOP_BLOCKS = frozenset({ast.If, ast.Try, ast.With})
_DISQUALIFYING = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Yield, ast.YieldFrom, ast.Global,
                  ast.Nonlocal, ast.Await)


@dataclass
class HelperModule:
    """A parsed local module: its top-level plain functions, what its imports bind, its source lines."""

    path: str  # as the scan names it (else resolved)
    functions: dict[str, ast.FunctionDef]
    aliases: dict[str, str]  # name -> qualified name of what an absolute import binds
    lines: list[str]
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # function -> its first and last line


@dataclass
class Expansion:
    """A file with its local helpers inlined: the tree and text to index, and where inlined lines come from."""

    tree: ast.Module
    text: str
    origins: dict[int, tuple[str, int]] = field(default_factory=dict)  # scaled line -> (helper file, its line)
    added: list[ast.stmt] = field(default_factory=list)  # the statements inlined

    def place(self, path: str, line: int) -> tuple[str, int]:
        """The (file, line) a scaled line of the expanded tree stands for."""
        found = self.origins.get(line)
        return found if found is not None else (path, max(1, line // SCALE))

    def placed_text(self, text: str, path: str, where: str) -> str:
        """A message with the scaled lines it names (``line 12000``) given back as source lines; a line of
        another file than ``where`` (the hit's) says which."""
        def real(match: re.Match) -> str:
            file, line = self.place(path, int(match.group(1)))
            return f"line {line}" + (f" of {os.path.basename(file)}" if file != where else "")
        return _LINE_MENTION.sub(real, text)


class Inliner:
    """Finds and inlines the calls of local helper functions, with the helper modules parsed once per scan."""

    def __init__(self, words: tuple[str, ...]):
        self.words = words  # a helper qualifies only when its source holds one of these
        self._encoded = tuple(word.encode() for word in words)
        self.known: dict[str, tuple[bytes, ast.Module]] = {}  # resolved path -> (bytes, tree) the scan parsed
        self.names: dict[str, str] = {}  # resolved path -> the path the scan names the file by
        self.files = None  # the FileLookups of the file being expanded (import resolution, cached per scan)
        self._modules: dict[str, HelperModule | None] = {}
        self._plains: dict[tuple[str, str], bool] = {}  # (module, function) -> it can be read at a call site
        self._reexports: dict[str, list[ast.ImportFrom]] = {}  # resolved path -> its module-level from-imports

    def expand(self, path: str, data: bytes, tree: ast.Module, files) -> Expansion | None:
        """The file with its qualifying helper calls inlined, or None when it makes none. ``files``: the scan's
        FileLookups. ``tree`` is changed in place (its lines scaled, the helpers' bodies inserted): the caller
        owns it and indexes the expansion instead."""
        if not path or b"import" not in data:
            return None
        imports = [stmt for stmt in _shallow(tree) if stmt.__class__ is ast.Import or stmt.__class__ is ast.ImportFrom]
        if data.count(b"import") > len(imports):  # some function imports for itself (or a comment says import)
            imports = [stmt for stmt in _statements(tree) if stmt.__class__ in (ast.Import, ast.ImportFrom)]
        if not imports:
            return None
        self.files = files
        self.names.setdefault(files.real(path), path)
        bound = {name: target for name, target in self._bound(path, imports).items() if self._offers(*target)}
        if not bound:
            return None
        calls = [stmt for stmt in _statements(tree) if stmt.__class__ in _CALL_STATEMENTS
                 and stmt.value.__class__ is ast.Call and (stmt.__class__ is not ast.Assign or len(stmt.targets) == 1)]
        found = {id(stmt): target for stmt, *target in self._candidates(calls, bound)}
        if not found:
            return None
        key = files.real(path)  # as another file's helper, this module is read again from disk (the tree changes)
        self.known.pop(key, None)
        self._modules.pop(key, None)
        nodes = walk(tree, operators=False)
        caller_names = {node.id for node in nodes if node.__class__ is ast.Name}
        for node in nodes:
            if node.__class__ in _POSITIONED:
                node.lineno *= SCALE
                node.end_lineno = (node.end_lineno or 0) * SCALE + SCALE - 1
        expansion = Expansion(ast.Module(tree.body, tree.type_ignores), data.decode("utf-8", errors="replace"))
        extra = []
        for body in list(_bodies(tree)):  # listed first: inlined statements are not searched again
            at = 0
            while at < len(body):
                target = found.get(id(body[at]))
                inlined = _inline(body[at], *target, expansion, caller_names) if target else None
                if inlined:
                    body[at + 1:at + 1] = inlined
                    expansion.added += inlined
                    helper, func = target
                    first, last_line = helper.spans[func.name]
                    extra.append("\n".join(helper.lines[first - 1:last_line]))
                    at += len(inlined)
                at += 1
        expansion.text += "\n" + "\n".join(extra)
        return expansion

    def _bound(self, path: str, imports: list[ast.stmt]) -> dict[str, tuple[str, str | None]]:
        """Names the file's imports bind to local modules (``du`` -> (dist_utils.py, None)) or to their functions
        (``setup_ddp`` -> (utils.py, "setup_ddp"))."""
        out: dict[str, tuple[str, str | None]] = {}
        for stmt in imports:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    found = self.files.find(path, alias.name, 0)
                    if found:
                        out[alias.asname or alias.name] = (found, None)
            else:
                for alias in stmt.names:
                    if alias.name == "*":
                        continue
                    inner = f"{stmt.module}.{alias.name}" if stmt.module else alias.name
                    module = self.files.find(path, inner, stmt.level)  # ``from pkg import utils``: a module
                    if module:
                        out[alias.asname or alias.name] = (module, None)
                    elif stmt.module:
                        found = self.files.find(path, stmt.module, stmt.level)
                        if found:
                            found = self._reexported(found, alias.name) or found
                            out[alias.asname or alias.name] = (found, alias.name)
        return out

    def _reexported(self, path: str, name: str, depth: int = 2) -> str | None:
        """The local module that a module importing ``name`` for its importers gets it from (a package's
        ``__init__.py`` holding ``from .dist import *`` or ``from .dist import setup_dist``), followed ``depth``
        re-exports deep; None when the module defines ``name`` itself or re-exports nothing by that name."""
        helper = self._module(path)
        if depth == 0 or helper is not None and name in helper.functions:
            return None
        for stmt in self._top_imports(path):
            if any(alias.name == "*" or alias.name == name and not alias.asname for alias in stmt.names):
                source = self.files.find(path, stmt.module, stmt.level)
                if source is None or source == path:
                    continue
                if self._offers(source, name):
                    return source
                deeper = self._reexported(source, name, depth - 1)
                if deeper:
                    return deeper
        return None

    def _top_imports(self, path: str) -> list[ast.ImportFrom]:
        """The module-level ``from ... import`` statements of a local module (the scan's own tree when it parsed
        the module and has not inlined into it yet, else parsed from disk; once per scan)."""
        key = self.files.real(path)
        found = self._reexports.get(key)
        if found is None:
            known = self.known.get(key)
            if known is not None:
                tree = known[1] if isinstance(known[1], ast.Module) else None
            else:
                try:
                    with open(key, "rb") as handle:
                        tree = parse_python(handle.read(), key)
                except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                    tree = None
            found = self._reexports[key] = [stmt for stmt in getattr(tree, "body", ())
                                            if isinstance(stmt, ast.ImportFrom) and stmt.module]
        return found

    def _offers(self, path: str, name: str | None) -> bool:
        """The local module has a qualifying function (``name``, when the import names one)."""
        helper = self._module(path)
        return helper is not None and (name in helper.functions if name else bool(helper.functions))

    def _candidates(self, calls: list[ast.stmt], bound: dict[str, tuple[str, str | None]]):
        """(statement, helper module, function) of each call statement that calls a qualifying helper."""
        for stmt in calls:
            name = dotted(stmt.value.func)
            if not name:
                continue
            target = bound.get(name)
            if target is None or target[1] is None:
                head, _, attr = name.rpartition(".")
                target = bound.get(head)
                if target is None or target[1] is not None:
                    continue
                target = (target[0], attr)
            helper = self._module(target[0])
            func = helper.functions.get(target[1]) if helper else None
            if func is not None and _fits(stmt.value, func) and self._plain(helper, func):
                yield stmt, helper, func

    def _plain(self, helper: HelperModule, func: ast.FunctionDef) -> bool:
        key = (helper.path, func.name)
        found = self._plains.get(key)
        if found is None:
            found = self._plains[key] = _plain(func)
        return found

    def _module(self, path: str) -> HelperModule | None:
        key = self.files.real(path)
        if key in self._modules:
            return self._modules[key]
        self._modules[key] = None
        known = self.known.get(key)
        try:
            data, tree = known if known else (None, None)
            if data is None:
                with open(key, "rb") as handle:
                    data = handle.read()
            if not any(word in data for word in self._encoded):
                return None  # no set-up word anywhere (an import line holds it too): nothing to parse
            if tree is None or isinstance(tree, SyntaxError):
                tree = parse_python(data, key)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if not isinstance(tree, ast.Module):
            return None
        text = data.decode("utf-8", errors="replace")
        aliases: dict[str, str] = {}
        for stmt in _shallow(tree):
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    head = alias.name.partition(".")[0]
                    aliases[alias.asname or head] = alias.name if alias.asname else head
            elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                for alias in stmt.names:
                    if alias.name != "*":
                        aliases[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
        # ``from torch.nn.parallel import DistributedDataParallel as DDP``: ``DDP`` in a function is a set-up word too
        words = self.words + tuple(name for name, qual in aliases.items() if any(w in qual for w in self.words))
        lines = text.splitlines() if any(word in text for word in words) else []
        functions: dict[str, ast.FunctionDef] = {}
        seen: set[str] = set()
        for stmt in tree.body:
            if lines and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if stmt.name in seen:
                    functions.pop(stmt.name, None)
                seen.add(stmt.name)
                if isinstance(stmt, ast.FunctionDef) and stmt.name not in functions and _qualifies(stmt, lines, words):
                    functions[stmt.name] = stmt
        spans = {name: (f.lineno, f.end_lineno or f.lineno) for name, f in functions.items()}
        self._modules[key] = HelperModule(self.names.get(key, key), functions, aliases, lines, spans)
        return self._modules[key]


def _qualifies(func: ast.FunctionDef, lines: list[str], words: tuple[str, ...]) -> bool:
    """A function short enough to inline and holding something a checker looks at."""
    if func.end_lineno is None or func.end_lineno - func.lineno >= SCALE - 2 or func.decorator_list:
        return False
    source = "\n".join(lines[func.lineno - 1:func.end_lineno])
    return any(word in source for word in words)


def _plain(func: ast.FunctionDef) -> bool:
    """No nested definitions, ``yield``, ``global`` or ``await``; a ``return`` only as the last statement."""
    body = func.body
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, _DISQUALIFYING) or (isinstance(node, ast.Return) and node is not body[-1]):
                return False
    return True


def _fits(call: ast.Call, func: ast.FunctionDef) -> bool:
    """The call binds the function's parameters plainly (no ``*args``/``**kwargs`` on either side)."""
    args = func.args
    if args.vararg or args.kwarg or args.posonlyargs:
        return False
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    names = {a.arg for a in [*args.args, *args.kwonlyargs]}
    return len(call.args) <= len(args.args) and all(k.arg in names for k in call.keywords)


def _statements(tree: ast.Module) -> list[ast.stmt]:
    """Every statement of the module, through statement bodies only (no expression walk)."""
    todo = list(tree.body)
    extend, blocks = todo.extend, _BLOCKS
    for stmt in todo:
        fields = blocks.get(stmt.__class__)
        if fields:
            for name in fields:
                extend(getattr(stmt, name))
            if stmt.__class__ is ast.Try:
                extend(stmt.handlers)
    return todo


def _shallow(tree: ast.Module) -> list[ast.stmt]:
    """The module's top-level statements and those of its top-level ``if``/``try``/``with`` blocks (where a module's
    imports are, unless a function imports for itself)."""
    out = []
    for stmt in tree.body:
        out.append(stmt)
        if stmt.__class__ in _TOP_BLOCKS:
            for name in _BLOCKS[stmt.__class__]:
                out.extend(getattr(stmt, name))
            if stmt.__class__ is ast.Try:
                out.extend(s for handler in stmt.handlers for s in handler.body)
    return out


def _bodies(tree: ast.Module):
    """Every statement list of the module (module body, function bodies, branches ...)."""
    todo = [tree.body]
    while todo:
        body = todo.pop()
        yield body
        for stmt in body:
            for name in _BLOCKS.get(stmt.__class__, ()):
                todo.append(getattr(stmt, name))
            if isinstance(stmt, ast.Try):
                todo.extend(h.body for h in stmt.handlers)


def _bound_names(func: ast.FunctionDef) -> tuple[set[str], set[str]]:
    """(every name the function binds: stored or imported, the names its imports bind), in one walk."""
    stored, imported = set(), set()
    for node in walk(func, operators=False):
        if node.__class__ is ast.Name:
            if node.ctx.__class__ is not ast.Load:
                stored.add(node.id)
        elif node.__class__ is ast.Import or node.__class__ is ast.ImportFrom:
            imported.update((a.asname or a.name).partition(".")[0] for a in node.names)
    return stored | imported, imported


def _expr_of(text: str, ctx: ast.expr_context) -> ast.expr:
    """``a.b.c`` as an expression in context ``ctx``."""
    head, *rest = text.split(".")
    node: ast.expr = ast.Name(head, ctx=ast.Load() if rest else ctx)
    for i, part in enumerate(rest):
        node = ast.Attribute(node, part, ctx=ast.Load() if i < len(rest) - 1 else ctx)
    return node


def _with_ctx(node: ast.expr, ctx: ast.expr_context) -> ast.expr:
    node = copy.deepcopy(node)
    if hasattr(node, "ctx"):
        node.ctx = ctx
    for sub in walk(node):
        if sub is not node and hasattr(sub, "ctx"):
            sub.ctx = ast.Load()
    return node


class _Rebind(ast.NodeTransformer):
    """Renames the helper's names to the caller's: returned locals to the call's targets, parameters to the
    arguments, names its imports bind to their qualified names."""

    def __init__(self, renamed: dict[str, str], substituted: dict[str, ast.expr], qualified: dict[str, str]):
        self.renamed, self.substituted, self.qualified = renamed, substituted, qualified

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.renamed:
            return ast.copy_location(_expr_of(self.renamed[node.id], node.ctx), node)
        if isinstance(node.ctx, ast.Load):
            if node.id in self.substituted:
                return ast.copy_location(_with_ctx(self.substituted[node.id], ast.Load()), node)
            if node.id in self.qualified:
                return ast.copy_location(_expr_of(self.qualified[node.id], node.ctx), node)
        return node


def _inline(stmt: ast.stmt, helper: HelperModule, func: ast.FunctionDef, expansion: Expansion,
            caller_names: set[str]) -> list[ast.stmt]:
    """The helper's body bound to the call of ``stmt``, with its lines placed right after the statement's."""
    call: ast.Call = stmt.value
    func = _fresh_copy(helper, func)
    if func is None:
        return []
    body = list(func.body)
    returned: list[ast.expr] = []
    if body and isinstance(body[-1], ast.Return):
        final = body.pop()
        if final.value is not None:
            returned = list(final.value.elts) if isinstance(final.value, ast.Tuple) else [final.value]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body.pop(0)  # the docstring
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) else getattr(stmt, "target", None)
    targets = list(target.elts) if isinstance(target, (ast.Tuple, ast.List)) else [target] if target else []
    if len(targets) != len(returned) and targets:
        if len(targets) == 1 and returned:  # ``pair = make()`` with ``return a, b``: kept whole
            returned, targets = [ast.Tuple(returned, ctx=ast.Load())], targets
        else:
            targets = []
    stored, imported = _bound_names(func)
    params = [a.arg for a in [*func.args.args, *func.args.kwonlyargs]]
    renamed: dict[str, str] = {}
    names_returned = [r.id for r in returned if isinstance(r, ast.Name)]
    for value, tgt in zip(returned, targets):
        text = dotted(tgt)
        if isinstance(value, ast.Name) and text and names_returned.count(value.id) == 1 and (
                value.id in stored or value.id in params):
            renamed[value.id] = text
    given: dict[str, ast.expr] = dict(zip((a.arg for a in func.args.args), call.args))
    given.update({k.arg: k.value for k in call.keywords})
    defaults = dict(zip([a.arg for a in func.args.args][len(func.args.args) - len(func.args.defaults):],
                        func.args.defaults))
    defaults.update({a.arg: d for a, d in zip(func.args.kwonlyargs, func.args.kw_defaults) if d is not None})
    substituted: dict[str, ast.expr] = {}
    prologue: list[ast.stmt] = []
    for name in params:
        value = given.get(name)
        if value is None:
            value = defaults.get(name)
            if value is None:
                continue
        plain = dotted(value) is not None or isinstance(value, ast.Constant)
        if name not in renamed and plain and name not in stored:
            substituted[name] = value
            continue
        if name in renamed and dotted(value) == renamed[name]:
            continue
        prologue.append(ast.Assign([ast.Name(name, ctx=ast.Store())], copy.deepcopy(value)))
    for name in sorted(stored - imported - set(params) - set(renamed)):
        if name in caller_names:  # a local of the helper is not the caller's variable of the same name
            renamed[name] = f"{name}_{func.name}"
    qualified = {name: qual for name, qual in helper.aliases.items() if name not in stored and name not in params}
    rebind = _Rebind(renamed, substituted, qualified)
    epilogue: list[ast.stmt] = []
    for value, tgt in zip(returned, targets):
        if isinstance(value, ast.Name) and value.id in renamed:
            continue
        epilogue.append(ast.Assign([copy.deepcopy(tgt)], value))
    if not targets:
        epilogue += [ast.Expr(v) for v in returned if isinstance(v, ast.Call)]
    # the prologue reads the caller's names (not renamed); the body and the epilogue are the helper's
    anchor = stmt.end_lineno // SCALE * SCALE  # the statement's last line: the prologue is placed right after it
    first, last_line = func.lineno, func.end_lineno or func.lineno
    out: list[ast.stmt] = []
    for part in prologue:
        _place(part, anchor + 1)
        out.append(part)
    for part in [*body, *epilogue]:
        new = rebind.visit(part)
        if new is None:
            continue
        base = getattr(new, "lineno", None) or last_line  # the epilogue's assignments are new: the return's line
        for node in walk(new, operators=False):
            if "lineno" not in node._attributes:
                continue
            line = getattr(node, "lineno", None)
            if line is None:  # made here (``args.rank`` for a parameter): the statement's line
                line = end = base
                node.col_offset = node.end_col_offset = 0
            else:
                line = line if first <= line <= last_line else base
                end = node.end_lineno if node.end_lineno and first <= node.end_lineno <= last_line else line
            node.lineno, node.end_lineno = anchor + 2 + line - first, anchor + 2 + end - first
            expansion.origins[node.lineno] = (helper.path, line)
            expansion.origins[node.end_lineno] = (helper.path, end)
        out.append(new)
    return out


def _fresh_copy(helper: HelperModule, func: ast.FunctionDef) -> ast.FunctionDef:
    """A new tree of the function, at its own lines (parsing its source is faster than copying its nodes)."""
    first, last_line = helper.spans[func.name]
    source = "\n" * (first - 1) + "\n".join(helper.lines[first - 1:last_line])
    try:
        fresh = parse_python(source, helper.path).body[0]
    except (SyntaxError, ValueError, IndexError):
        return None
    return fresh if isinstance(fresh, ast.FunctionDef) and fresh.name == func.name else None


def _place(node: ast.AST, line: int) -> None:
    """Put every node of a statement made here on ``line``."""
    for sub in walk(node):
        if isinstance(sub, (ast.expr, ast.stmt, ast.keyword, ast.arg)):
            sub.lineno = sub.end_lineno = line
            sub.col_offset = sub.end_col_offset = 0


def setup_words(P) -> tuple[str, ...]:
    """The words a helper must hold to be inlined: the last parts of the set-up calls of the patterns (process group,
    DDP wrap, samplers, loaders), ``set_device``, and the barriers (a ``dist_barrier()`` helper is a barrier where it
    is called). A training loop or a logging helper elsewhere is not inlined."""
    keys = ("ddp_wrappers", "init_process_group", "distributed_samplers", "dataloaders")
    return tuple(sorted({q.rpartition(".")[2] for key in keys for q in getattr(P, key)} | {"set_device"}
                        | set(P.barrier_methods)))
