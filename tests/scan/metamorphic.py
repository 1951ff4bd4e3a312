"""Meaning-preserving rewrites of training scripts: the scanner's verdict must not change under them.

A scanner that knows the spellings of its corpus, not the meaning, changes its verdict when a script is
written another way. Each transformation here takes a small project (``Project``: relative path -> source,
and the entry file) and returns the same program spelled differently, or None when it does not apply
(nothing to rewrite, or the rewrite could not keep the meaning). They work on the AST and write back with
``ast.unparse``; ``identity`` (parse + unparse only) measures what the round trip alone changes.

``bench/scan_metamorphic.py`` runs them over the dev split of the real corpora; ``test_metamorphic.py``
pins the ones the scanner is already invariant to.
"""

from __future__ import annotations

import ast
import builtins
import copy
import re
from dataclasses import dataclass, field, replace
from typing import Callable

from troubleshooter.scan.model import is_main_block

# --- the project a transformation rewrites ----------------------------------------------------------------


@dataclass(frozen=True)
class Project:
    """Files of one scanned item (relative path -> source) and the entry file the rewrites target."""

    files: dict[str, str]
    entry: str
    extra: tuple[str, ...] = field(default=())  # files a rewrite added (a sibling helper module)

    @property
    def source(self) -> str:
        return self.files[self.entry]

    def with_entry(self, text: str, **added: str) -> "Project":
        folder = self.entry.rpartition("/")[0]
        new = {f"{folder}/{name}" if folder else name: body for name, body in added.items()}
        return replace(self, files={**self.files, self.entry: text, **new}, extra=self.extra + tuple(new))

    @property
    def single(self) -> bool:
        return len(self.files) == 1


Transform = Callable[[Project], "Project | None"]


def _rewrite(project: Project, change: Callable[[ast.Module], bool]) -> Project | None:
    """Parse the entry, let ``change`` edit the tree in place (False: not applicable), write it back."""
    tree = ast.parse(project.source)
    if not change(tree):
        return None
    ast.fix_missing_locations(tree)
    text = ast.unparse(tree)
    ast.parse(text)  # a rewrite must stay valid Python
    return project.with_entry(text + "\n")


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _name_loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _name_stores(node: ast.AST) -> set[str]:
    out = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    for n in ast.walk(node):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).partition(".")[0] for a in n.names}
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
    return out


def _imported_names(tree: ast.Module) -> set[str]:
    return {(a.asname or a.name).partition(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
            for a in n.names}


def _all_identifiers(tree: ast.AST) -> set[str]:
    return _name_loads(tree) | _name_stores(tree) | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    taken.add(name)
    return name


def identity(project: Project) -> Project | None:
    """Parse and unparse only: what the round trip itself changes (comments, layout)."""
    return _rewrite(project, lambda tree: True)


# --- renames ----------------------------------------------------------------------------------------------

SYNONYMS = {
    "rank": "r", "local_rank": "lrank", "global_rank": "grank", "world_size": "nprocs", "gpu": "dev_index",
    "gpu_id": "dev_index", "device": "dev", "model": "net", "ddp_model": "wrapped", "optimizer": "opt",
    "loader": "batches", "train_loader": "batches", "dataloader": "batches", "sampler": "shard",
    "train_sampler": "shard", "dataset": "data", "train_dataset": "data", "loss": "objective",
    "criterion": "loss_fn", "epoch": "ep", "args": "cfg", "opt": "options", "is_main": "lead",
    "is_master": "lead", "main": "run", "train": "fit", "setup": "prepare", "cleanup": "teardown",
    "main_worker": "worker", "Trainer": "Runner",
}


def _bound_in_class_bodies(tree: ast.Module) -> set[str]:
    out = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for stmt in cls.body:
            out |= _name_stores(stmt) if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                else {stmt.name}
    return out


def _keyword_names(tree: ast.Module) -> set[str]:
    return {k.arg for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg}


def _renamable(project: Project, tree: ast.Module) -> set[str]:
    """Names the script binds itself whose spelling carries no meaning outside it: not imported, not builtins,
    not class attributes (reached as ``obj.name``), not keyword names of calls, not dunders, not ``self``, and
    (in a multi-file project) not a module-level name a sibling might import."""
    bound = _name_stores(tree)
    excluded = (_imported_names(tree) | set(dir(builtins)) | _bound_in_class_bodies(tree) | _keyword_names(tree)
                | {"self", "cls", "_"})
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            excluded |= set(node.names)
    if not project.single:
        others = {word for path, text in project.files.items() if path != project.entry
                  for word in re.findall(r"\w+", text)}
        excluded |= bound & others
    if "__all__" in bound:
        excluded |= bound
    return {name for name in bound - excluded if not name.startswith("__")}


def _apply_renames(tree: ast.Module, names: dict[str, str]) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]
        elif isinstance(node, ast.arg) and node.arg in names:
            node.arg = names[node.arg]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in names:
            node.name = names[node.name]
        elif isinstance(node, ast.ExceptHandler) and node.name in names:
            node.name = names[node.name]


def _rename(project: Project, choose: Callable[[str, set[str]], str | None]) -> Project | None:
    def change(tree: ast.Module) -> bool:
        taken = _all_identifiers(tree) | set(dir(builtins))
        mapping = {}
        for name in sorted(_renamable(project, tree)):
            new = choose(name, taken)
            if new and new != name:
                mapping[name] = _fresh(new, taken)
        _apply_renames(tree, mapping)
        return bool(mapping)
    return _rewrite(project, change)


def rename_synonyms(project: Project) -> Project | None:
    """The usual names (rank, model, optimizer, loader, main, Trainer...) spelled otherwise (rank -> r)."""
    return _rename(project, lambda name, taken: SYNONYMS.get(name))


def rename_all(project: Project) -> Project | None:
    """Every name the script binds itself becomes an opaque one (v1, v2...): nothing left to read in names."""
    counter = iter(range(1, 10**6))
    return _rename(project, lambda name, taken: f"v{next(counter)}")


# --- imports ----------------------------------------------------------------------------------------------

# modules whose members scripts import either way (``dist.barrier()`` / ``from torch.distributed import barrier``)
MEMBER_MODULES = ("torch.distributed", "torch.nn.parallel", "torch.utils.data", "torch.utils.data.distributed",
                  "torch.multiprocessing", "os")


def _module_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> module it is bound to by a module-level ``import a.b as x`` / ``from a import b as x``
    / ``import torch`` (prefix binding)."""
    out = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    out[a.name.partition(".")[0]] = a.name.partition(".")[0]
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            for a in stmt.names:
                full = f"{stmt.module}.{a.name}"
                if full in MEMBER_MODULES or full in ("torch.nn", "torch.distributed"):
                    out[a.asname or a.name] = full
    return out


def _chain(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def import_from_style(project: Project) -> Project | None:
    """``import torch.distributed as dist`` -> ``from torch import distributed as dist`` (same alias)."""
    def change(tree: ast.Module) -> bool:
        done = False
        for i, stmt in enumerate(tree.body):
            if isinstance(stmt, ast.Import) and len(stmt.names) == 1 and stmt.names[0].asname \
                    and "." in stmt.names[0].name:
                head, _, tail = stmt.names[0].name.rpartition(".")
                tree.body[i] = ast.ImportFrom(module=head, names=[ast.alias(tail, stmt.names[0].asname)], level=0)
                done = True
        return done
    return _rewrite(project, change)


def import_realias(project: Project) -> Project | None:
    """Other aliases: ``dist`` -> ``tdist``, ``DDP`` -> ``TorchDDP``, ``mp`` -> ``tmp``..."""
    def change(tree: ast.Module) -> bool:
        taken = _all_identifiers(tree) | set(dir(builtins))
        mapping = {}
        for stmt in tree.body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) and (
                    (stmt.module if isinstance(stmt, ast.ImportFrom) else stmt.names[0].name) or "").startswith("torch"):
                for a in stmt.names:
                    if a.asname and a.asname not in mapping:
                        mapping[a.asname] = _fresh("torch_" + a.asname.lower(), taken)
                        a.asname = mapping[a.asname]
        if not mapping:
            return False
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in mapping:
                node.id = mapping[node.id]
        return True
    return _rewrite(project, change)


def import_unqualify(project: Project) -> Project | None:
    """``dist.init_process_group(...)`` -> ``from torch.distributed import init_process_group`` +
    ``init_process_group(...)`` (members of the usual modules; a name the script binds itself is left)."""
    def change(tree: ast.Module) -> bool:
        aliases = _module_aliases(tree)
        bound = _name_stores(tree)
        wanted: dict[str, set[str]] = {}
        parents = _parents(tree)
        for node in list(ast.walk(tree)):
            if not isinstance(node, ast.Attribute) or isinstance(parents.get(node), ast.Attribute):
                continue
            chain = _chain(node)
            if not chain or chain[0] not in aliases:
                continue
            full = ".".join([aliases[chain[0]], *chain[1:]])
            for module in sorted(MEMBER_MODULES, key=len, reverse=True):
                if full.startswith(module + ".") and full.count(".") >= module.count(".") + 1:
                    member = full[len(module) + 1:].partition(".")[0]
                    if member in bound or (member in wanted and module not in wanted[member]) or \
                            any(member in names for m, names in wanted.items() if m != module):
                        break
                    # the outermost attribute down to the member becomes the bare name
                    target = node
                    depth = full[len(module) + 1:].count(".")
                    for _ in range(depth):
                        target = target.value
                    _replace(parents, target, ast.Name(member, ctx=target.ctx))
                    wanted.setdefault(module, set()).add(member)
                    break
        if not wanted:
            return False
        imports = [ast.ImportFrom(module=m, names=[ast.alias(n) for n in sorted(names)], level=0)
                   for m, names in sorted(wanted.items())]
        tree.body[_after_imports(tree):_after_imports(tree)] = imports
        return True
    return _rewrite(project, change)


def import_qualify(project: Project) -> Project | None:
    """``from torch.distributed import init_process_group`` + ``init_process_group(...)`` ->
    ``import torch.distributed`` + ``torch.distributed.init_process_group(...)`` (and ``DDP`` ->
    ``torch.nn.parallel.DistributedDataParallel``)."""
    def change(tree: ast.Module) -> bool:
        if "torch" in _name_stores(tree) - _imported_names(tree):
            return False
        names: dict[str, tuple[str, str]] = {}
        for i, stmt in enumerate(list(tree.body)):
            if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module in MEMBER_MODULES \
                    and stmt.module != "os":
                keep = []
                for a in stmt.names:
                    if a.name == "*" or f"{stmt.module}.{a.name}" in MEMBER_MODULES:
                        keep.append(a)
                    else:
                        names[a.asname or a.name] = (stmt.module, a.name)
                stmt.names = keep
        if not names:
            return False
        rebound = {n for n in _name_stores(tree) if n in names} - {
            a.asname or a.name for s in ast.walk(tree) if isinstance(s, ast.ImportFrom) for a in s.names}
        if rebound:
            return False
        for node in list(ast.walk(tree)):
            for fname, value in ast.iter_fields(node):
                if isinstance(value, list):
                    for j, item in enumerate(value):
                        if isinstance(item, ast.Name) and item.id in names:
                            value[j] = _dotted_expr(*names[item.id], item.ctx)
                elif isinstance(value, ast.Name) and value.id in names:
                    setattr(node, fname, _dotted_expr(*names[value.id], value.ctx))
        tree.body = [s for s in tree.body if not (isinstance(s, ast.ImportFrom) and not s.names)]
        modules = sorted({m for m, _ in names.values()})
        tree.body[_after_imports(tree):_after_imports(tree)] = [ast.Import(names=[ast.alias(m)]) for m in modules]
        return True
    return _rewrite(project, change)


def _dotted_expr(module: str, member: str, ctx) -> ast.AST:
    parts = [*module.split("."), member]
    node: ast.AST = ast.Name(parts[0], ctx=ast.Load())
    for part in parts[1:]:
        node = ast.Attribute(node, part, ctx=ast.Load())
    node.ctx = ctx
    return node


def _replace(parents: dict, old: ast.AST, new: ast.AST) -> None:
    parent = parents[old]
    for fname, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, fname, new)
            return
        if isinstance(value, list):
            for j, item in enumerate(value):
                if item is old:
                    value[j] = new
                    return


def _after_imports(tree: ast.Module) -> int:
    """Index after the leading docstring, ``__future__`` and import statements."""
    i = 0
    while i < len(tree.body) and (isinstance(tree.body[i], (ast.Import, ast.ImportFrom)) or (
            i == 0 and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant))):
        i += 1
    return i


# --- environment and command line -------------------------------------------------------------------------

def _env_read(node: ast.AST) -> tuple[ast.AST, ast.AST | None] | None:
    """(key, default) of ``os.environ[key]`` / ``os.environ.get(key[, d])`` / ``os.getenv(key[, d])`` loads."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _chain(node.value) == ["os", "environ"]:
        return node.slice, None
    if isinstance(node, ast.Call) and not node.keywords and 1 <= len(node.args) <= 2 and \
            _chain(node.func) in (["os", "environ", "get"], ["os", "getenv"]):
        return node.args[0], node.args[1] if len(node.args) == 2 else None
    return None


def _env_rewrite(project: Project, spell: Callable[[ast.AST, ast.AST | None], ast.AST | None]) -> Project | None:
    def change(tree: ast.Module) -> bool:
        if "os" not in _imported_names(tree):
            return False
        parents = _parents(tree)
        done = False
        for node in list(ast.walk(tree)):
            read = _env_read(node)
            if read is None or (isinstance(parents.get(node), ast.Call) and parents[node].func is node):
                continue
            new = spell(*read)
            if new is not None and ast.dump(new) != ast.dump(node):
                _replace(parents, node, new)
                done = True
        return done
    return _rewrite(project, change)


def _os(*attrs: str) -> ast.AST:
    return _dotted_expr("os", ".".join(attrs), ast.Load()) if len(attrs) == 1 else \
        ast.Attribute(_dotted_expr("os", attrs[0], ast.Load()), attrs[1], ctx=ast.Load())


def env_getenv(project: Project) -> Project | None:
    """``os.environ["LOCAL_RANK"]`` / ``os.environ.get(...)`` -> ``os.getenv(...)`` (a missing key: None
    instead of KeyError, the same on a launched run)."""
    return _env_rewrite(project, lambda key, default: ast.Call(
        _os("getenv"), [key, *([default] if default is not None else [])], []))


def env_get(project: Project) -> Project | None:
    """``os.environ[...]`` / ``os.getenv(...)`` -> ``os.environ.get(...)``."""
    return _env_rewrite(project, lambda key, default: ast.Call(
        _os("environ", "get"), [key, *([default] if default is not None else [])], []))


def env_subscript(project: Project) -> Project | None:
    """``os.getenv("RANK")`` / ``os.environ.get("RANK")`` (no default) -> ``os.environ["RANK"]``."""
    return _env_rewrite(project, lambda key, default: None if default is not None else ast.Subscript(
        _os("environ"), key, ctx=ast.Load()))


def local_rank_option_spelling(project: Project) -> Project | None:
    """``add_argument("--local_rank")`` <-> ``add_argument("--local-rank")`` (argparse's dest is the same)."""
    def change(tree: ast.Module) -> bool:
        done = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and arg.value in ("--local_rank", "--local-rank"):
                        arg.value = "--local-rank" if arg.value == "--local_rank" else "--local_rank"
                        done = True
        return done
    return _rewrite(project, change)


def local_rank_from_argparse(project: Project) -> Project | None:
    """``int(os.environ["LOCAL_RANK"])`` -> the launcher's option, defaulted from the environment as torch
    documents (``--local-rank``, default ``int(os.environ.get("LOCAL_RANK", 0))``)."""
    def change(tree: ast.Module) -> bool:
        if "os" not in _imported_names(tree):
            return False
        parents = _parents(tree)
        taken = _all_identifiers(tree) | set(dir(builtins))
        holder = _fresh("launch_args", taken)
        done = False
        for node in list(ast.walk(tree)):
            read = _env_read(node)
            call = parents.get(node)
            if read and isinstance(read[0], ast.Constant) and read[0].value == "LOCAL_RANK" and \
                    isinstance(call, ast.Call) and _chain(call.func) == ["int"] and call.args == [node]:
                _replace(_parents(tree), call, ast.Attribute(ast.Name(holder, ctx=ast.Load()), "local_rank",
                                                             ctx=ast.Load()))
                done = True
        if not done:
            return False
        parser = ast.parse(
            f"import argparse as _argparse_launch\n_launch_parser = _argparse_launch.ArgumentParser(add_help=False)\n"
            f"_launch_parser.add_argument('--local-rank', '--local_rank', type=int, "
            f"default=int(os.environ.get('LOCAL_RANK', 0)))\n{holder}, _ = _launch_parser.parse_known_args()\n").body
        tree.body[_after_imports(tree):_after_imports(tree)] = parser
        return True
    return _rewrite(project, change)


# --- structure --------------------------------------------------------------------------------------------

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def _function_loads(tree: ast.Module) -> set[str]:
    return {name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for name in _name_loads(n)}


def wrap_main(project: Project) -> Project | None:
    """Module-level training code (outside any function) -> ``def main():`` + ``if __name__ == "__main__":``."""
    def change(tree: ast.Module) -> bool:
        start = _after_imports(tree)
        moved = [s for s in tree.body[start:] if not isinstance(s, _DEFS) and not is_main_block(s)]
        if not any(isinstance(s, (ast.For, ast.While, ast.With, ast.If)) or
                   (isinstance(s, (ast.Expr, ast.Assign)) and isinstance(s.value, ast.Call)) for s in moved):
            return False
        if any(is_main_block(s) for s in tree.body) or _name_stores(ast.Module(moved, [])) & _function_loads(tree):
            return False
        if any(isinstance(n, (ast.Return, ast.Yield, ast.Global)) for s in moved for n in ast.walk(s)):
            return False
        # the code stays where it runs: definitions it uses come first
        name = _fresh("main", _all_identifiers(tree) | set(dir(builtins)))
        kept = [s for s in tree.body if not any(s is m for m in moved)]
        func = ast.FunctionDef(name, ast.arguments([], [], None, [], [], None, []), moved, [], None, type_params=[])
        guard = ast.parse(f"if __name__ == '__main__':\n    {name}()").body[0]
        tree.body = [*kept, func, guard]
        return True
    return _rewrite(project, change)


def inline_main(project: Project) -> Project | None:
    """``def main(): body`` + ``if __name__ == "__main__": main()`` -> the body at the main block (flat script)."""
    def change(tree: ast.Module) -> bool:
        blocks = [s for s in tree.body if is_main_block(s)]
        if len(blocks) != 1:
            return False
        block = blocks[0]
        calls = [s for s in block.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                 and isinstance(s.value.func, ast.Name) and not s.value.args and not s.value.keywords]
        if len(calls) != 1:
            return False
        name = calls[0].value.func.id
        funcs = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == name]
        if len(funcs) != 1:
            return False
        func = funcs[0]
        a = func.args
        if a.args or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg or func.decorator_list:
            return False
        inner = [n for s in func.body for n in ast.walk(s)]
        if any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)) for n in inner):
            return False
        others = [s for s in tree.body if s is not func]
        if name in _name_loads(ast.Module([s for s in others if s is not block], [])):
            return False
        if _name_stores(ast.Module(func.body, [])) & (_function_loads(ast.Module(others, [])) | _name_stores(
                ast.Module([s for s in others if not isinstance(s, _DEFS)], []))):
            return False
        i = block.body.index(calls[0])
        block.body[i:i + 1] = func.body
        tree.body.remove(func)
        return True
    return _rewrite(project, change)


# set-up: the calls a script makes to become distributed and build what it trains on
SETUP_CALLS = {"init_process_group", "set_device", "DistributedDataParallel", "DistributedSampler", "DataLoader",
               "spawn"}


def _setup_names(tree: ast.Module) -> set[str]:
    names = set(SETUP_CALLS)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names |= {a.asname for a in node.names if a.name in SETUP_CALLS and a.asname}
    return names


def _is_setup(stmt: ast.stmt, names: set[str]) -> bool:
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            f = node.func
            called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if called in names and called != "spawn":
                return True
    return False


def _jumps(stmts: list[ast.stmt]) -> bool:
    """A return/yield/global anywhere, or a break/continue not inside a loop of these statements."""
    def walk(node, in_loop):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return False
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)):
            return True
        if isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
            return True
        loop = in_loop or isinstance(node, (ast.For, ast.While, ast.AsyncFor))
        return any(walk(c, loop) for c in ast.iter_child_nodes(node))
    return any(walk(s, False) for s in stmts)


@dataclass
class _Region:
    """A contiguous run of statements of one body, and what flows in and out of it."""

    body: list[ast.stmt]
    start: int
    end: int  # exclusive
    inputs: list[str]
    outputs: list[str]
    method: bool  # the enclosing function is a method (``self`` is among the inputs)


def _region(body: list[ast.stmt], start: int, end: int, func: ast.AST | None, tree: ast.Module) -> _Region | None:
    """The region ``body[start:end]`` with its inputs (names it reads that the enclosing function binds) and
    outputs (names it binds that are read after it). None when it cannot be moved out unchanged."""
    stmts = body[start:end]
    if _jumps(stmts):
        return None
    inside = ast.Module(stmts, [])
    after = ast.Module(body[end:], [])
    if func is None:
        defined_before = _shallow_stores([s for s in body[:start] if not isinstance(s, _DEFS)])
        inputs = sorted(_name_loads(inside) & defined_before)
        outputs = sorted(_shallow_stores(stmts) & (_name_loads(after) | _function_loads(tree)))
    else:
        a = func.args
        params = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []),
                                  *([a.kwarg] if a.kwarg else [])]}
        inputs = sorted(_name_loads(inside) & (params | _shallow_stores(body[:start])))
        closures = [n for s in body for n in ast.walk(s) if isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ClassDef))]
        read_later = _name_loads(after).union(*(_name_loads(n) for n in closures))
        outputs = sorted(_shallow_stores(stmts) & read_later)
    method = func is not None and bool(func.args.args) and func.args.args[0].arg == "self"
    return _Region(body, start, end, inputs, outputs, method)


def _setup_region(tree: ast.Module) -> tuple[_Region, ast.AST | None] | None:
    """The statements, in one function (or at module level), from the first set-up call to the last one."""
    names = _setup_names(tree)
    holders = [(tree.body, None)] + [(f.body, f) for f in ast.walk(tree)
                                     if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    best = None
    for body, func in holders:
        marks = [i for i, s in enumerate(body) if not isinstance(s, _DEFS) and not is_main_block(s)
                 and _is_setup(s, names)]
        if len(marks) < 1:
            continue
        region = _region(body, marks[0], marks[-1] + 1, func, tree)
        if region is not None and (best is None or len(marks) > best[2]):
            best = (region, func, len(marks))
    return (best[0], best[1]) if best else None


def _call_stmt(region: _Region, callee: ast.AST) -> ast.stmt:
    call = ast.Call(callee, [ast.Name(n, ctx=ast.Load()) for n in region.inputs], [])
    if not region.outputs:
        return ast.Expr(call)
    if len(region.outputs) == 1:
        target: ast.AST = ast.Name(region.outputs[0], ctx=ast.Store())
    else:
        target = ast.Tuple([ast.Name(n, ctx=ast.Store()) for n in region.outputs], ctx=ast.Store())
    return ast.Assign([target], call, lineno=0)


def _return_stmt(region: _Region) -> list[ast.stmt]:
    if not region.outputs:
        return []
    value = ast.Name(region.outputs[0], ctx=ast.Load()) if len(region.outputs) == 1 else \
        ast.Tuple([ast.Name(n, ctx=ast.Load()) for n in region.outputs], ctx=ast.Load())
    return [ast.Return(value)]


def _params(names: list[str], self_first: bool = False) -> ast.arguments:
    return ast.arguments([], [ast.arg(n) for n in (["self"] if self_first else []) + names], None, [], [], None, [])


def _shallow_stores(stmts: list[ast.stmt]) -> set[str]:
    """Names bound by these statements in their own scope (not inside the functions and classes they define)."""
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            return
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).partition(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in stmts:
        visit(stmt)
    return out


def _free_module_names(stmts: list[ast.stmt], tree: ast.Module, inputs: list[str]) -> list[str]:
    """Module-level names (functions, classes, globals; not imports) the moved statements read without binding
    them: a sibling module gets them as parameters."""
    module_bound = _shallow_stores([s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))])
    inside = ast.Module(stmts, [])
    return sorted(_name_loads(inside) & module_bound - set(inputs) - _shallow_stores(stmts))


def _extract(project: Project, where: str) -> Project | None:
    tree = ast.parse(project.source)
    found = _setup_region(tree)
    if found is None:
        return None
    region, func = found
    stmts = region.body[region.start:region.end]
    taken = _all_identifiers(tree) | set(dir(builtins))
    if where == "module":  # the entry's module-level names the set-up reads arrive as parameters
        region.inputs = region.inputs + _free_module_names(stmts, tree, region.inputs)
    helper_name = _fresh("setup_distributed", taken)
    params = list(region.inputs)
    body = [*stmts, *_return_stmt(region)] or [ast.Pass()]
    if where == "function":
        helper = ast.FunctionDef(helper_name, _params(params), body, [], None, type_params=[])
        callee: ast.AST = ast.Name(helper_name, ctx=ast.Load())
        tree.body.insert(_first_def(tree, func), helper)
    elif where == "method":
        cls_name = _fresh("DistributedSetup", taken)
        method = ast.FunctionDef("build", _params(params, self_first=True), body, [], None, type_params=[])
        helper = ast.ClassDef(cls_name, [], [], [method], [], type_params=[])
        callee = ast.Attribute(ast.Call(ast.Name(cls_name, ctx=ast.Load()), [], []), "build", ctx=ast.Load())
        tree.body.insert(_first_def(tree, func), helper)
    else:
        imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom)) and not (
            isinstance(s, ast.ImportFrom) and s.module == "__future__")]
        helper = ast.FunctionDef(helper_name, _params(params), body, [], None, type_params=[])
        module_name = _fresh("ddp_setup", set(p.rpartition("/")[2][:-3] for p in project.files) | taken)
        sibling = ast.Module([*copy.deepcopy(imports), helper], [])
        ast.fix_missing_locations(sibling)
        callee = ast.Name(helper_name, ctx=ast.Load())
        tree.body.insert(_after_imports(tree), ast.ImportFrom(module=module_name, names=[ast.alias(helper_name)],
                                                              level=0))
    region.body[region.start:region.end] = [_call_stmt(region, callee)]
    ast.fix_missing_locations(tree)
    text = ast.unparse(tree) + "\n"
    ast.parse(text)
    if where == "module":
        return project.with_entry(text, **{f"{module_name}.py": ast.unparse(sibling) + "\n"})
    return project.with_entry(text)


def _first_def(tree: ast.Module, func: ast.AST | None) -> int:
    """Where a new module-level definition goes: before the statement holding ``func`` (or the first statement
    that is not an import, for module-level set-up)."""
    if func is not None:
        for i, stmt in enumerate(tree.body):
            if any(n is func for n in ast.walk(stmt)):
                return i
    return _after_imports(tree)


def setup_to_function(project: Project) -> Project | None:
    """The set-up (init_process_group ... DDP wrap ... loader build) moved into a helper function it calls."""
    return _extract(project, "function")


def setup_to_method(project: Project) -> Project | None:
    """The set-up moved into a method of a small class (``DistributedSetup().build(...)``)."""
    return _extract(project, "method")


def setup_to_module(project: Project) -> Project | None:
    """The set-up moved into a sibling module the entry imports (``from ddp_setup import setup_distributed``)."""
    return _extract(project, "module")


def _training_loop(tree: ast.Module) -> tuple[list[ast.stmt], int, ast.AST | None] | None:
    """(body, index, enclosing function) of the outermost loop that calls ``backward`` or ``step``."""
    holders = [(tree.body, None)] + [(f.body, f) for f in ast.walk(tree)
                                     if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for body, func in holders:
        for i, stmt in enumerate(body):
            if isinstance(stmt, (ast.For, ast.While)) and any(
                    isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("backward", "step")
                    for n in ast.walk(stmt)):
                return body, i, func
    return None


def loop_in_trainer(project: Project) -> Project | None:
    """The training loop moved into ``class Trainer`` whose ``__init__`` keeps what it reads (``self.model``...)
    and whose ``fit()`` runs it."""
    tree = ast.parse(project.source)
    found = _training_loop(tree)
    if found is None:
        return None
    body, i, func = found
    if func is not None and func.args.args and func.args.args[0].arg == "self":
        return None  # already a method
    region = _region(body, i, i + 1, func, tree)
    loop = body[i]
    if region is None or any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
                             for n in ast.walk(loop)):
        return None
    fields = set(region.inputs)

    class ToSelf(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return ast.Attribute(ast.Name("self", ctx=ast.Load()), node.id, ctx=node.ctx) if node.id in fields else node

    loop = ToSelf().visit(loop)
    cls_name = _fresh("Trainer", _all_identifiers(tree) | set(dir(builtins)))
    init_body = [ast.Assign([ast.Attribute(ast.Name("self", ctx=ast.Load()), n, ctx=ast.Store())],
                            ast.Name(n, ctx=ast.Load()), lineno=0) for n in region.inputs] or [ast.Pass()]
    outputs = [ast.Attribute(ast.Name("self", ctx=ast.Load()), n, ctx=ast.Load()) if n in fields
               else ast.Name(n, ctx=ast.Load()) for n in region.outputs]
    ret = [] if not outputs else [ast.Return(outputs[0] if len(outputs) == 1 else ast.Tuple(outputs, ctx=ast.Load()))]
    cls = ast.ClassDef(cls_name, [], [], [
        ast.FunctionDef("__init__", _params(region.inputs, self_first=True), init_body, [], None, type_params=[]),
        ast.FunctionDef("fit", _params([], self_first=True), [loop, *ret], [], None, type_params=[]),
    ], [], type_params=[])
    trainer = ast.Call(ast.Name(cls_name, ctx=ast.Load()), [ast.Name(n, ctx=ast.Load()) for n in region.inputs], [])
    body[i:i + 1] = [_call_stmt(replace(region, inputs=[]), ast.Attribute(trainer, "fit", ctx=ast.Load()))]
    tree.body.insert(_first_def(tree, func), cls)
    ast.fix_missing_locations(tree)
    text = ast.unparse(tree) + "\n"
    ast.parse(text)
    return project.with_entry(text)


# --- rank guards ------------------------------------------------------------------------------------------

GUARD_WORDS = re.compile(r"rank|main|master|primary|gpu|local|is_zero|leader", re.IGNORECASE)


def _guard_ifs(tree: ast.Module) -> list[ast.If]:
    """``if`` statements whose test reads like a rank/main-process test (the rewrites below are equivalences
    for any test; this only picks the ones that matter)."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.If) and not is_main_block(n)
            and GUARD_WORDS.search(ast.unparse(n.test))]


def _negate(test: ast.AST) -> ast.AST:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        flip = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
                ast.LtE: ast.Gt, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
        return ast.Compare(test.left, [flip[type(test.ops[0])]()], test.comparators)
    return ast.UnaryOp(ast.Not(), test)


def guard_inverted(project: Project) -> Project | None:
    """``if rank == 0: A [else: B]`` -> ``if rank != 0: B (or pass) else: A``."""
    def change(tree: ast.Module) -> bool:
        ifs = _guard_ifs(tree)
        for node in ifs:
            node.test = _negate(node.test)
            node.body, node.orelse = (node.orelse or [ast.Pass()]), node.body
        return bool(ifs)
    return _rewrite(project, change)


def guard_flag(project: Project) -> Project | None:
    """``if rank == 0:`` -> ``is_lead = rank == 0`` just before, then ``if is_lead:``."""
    def change(tree: ast.Module) -> bool:
        taken = _all_identifiers(tree) | set(dir(builtins))
        done = False
        for holder in list(ast.walk(tree)):
            for fname in ("body", "orelse", "finalbody"):
                stmts = getattr(holder, fname, None)
                if not isinstance(stmts, list) or isinstance(holder, ast.If) and fname == "orelse" and \
                        len(stmts) == 1 and isinstance(stmts[0], ast.If):
                    continue  # an elif chain keeps its shape
                for stmt in list(stmts):
                    if isinstance(stmt, ast.If) and stmt in _guard_ifs(ast.Module([stmt], [])) and \
                            not isinstance(stmt.test, ast.Name):
                        flag = _fresh("is_lead", taken)
                        stmts.insert(stmts.index(stmt), ast.Assign([ast.Name(flag, ctx=ast.Store())], stmt.test,
                                                                   lineno=0))
                        stmt.test = ast.Name(flag, ctx=ast.Load())
                        done = True
        return done
    return _rewrite(project, change)


def guard_walrus(project: Project) -> Project | None:
    """``if rank == 0:`` -> ``if (is_lead := rank == 0):``."""
    def change(tree: ast.Module) -> bool:
        taken = _all_identifiers(tree) | set(dir(builtins))
        ifs = [n for n in _guard_ifs(tree) if not isinstance(n.test, ast.Name)]
        for node in ifs:
            node.test = ast.NamedExpr(ast.Name(_fresh("is_lead", taken), ctx=ast.Store()), node.test)
        return bool(ifs)
    return _rewrite(project, change)


def guard_operands_swapped(project: Project) -> Project | None:
    """``rank == 0`` -> ``0 == rank`` in rank tests."""
    def change(tree: ast.Module) -> bool:
        done = False
        for node in _guard_ifs(tree):
            for cmp in ast.walk(node.test):
                if isinstance(cmp, ast.Compare) and len(cmp.ops) == 1 and isinstance(cmp.ops[0], (ast.Eq, ast.NotEq)) \
                        and isinstance(cmp.comparators[0], ast.Constant):
                    cmp.left, cmp.comparators = cmp.comparators[0], [cmp.left]
                    done = True
        return done
    return _rewrite(project, change)


def guard_early_return(project: Project) -> Project | None:
    """A function ending in ``if rank == 0: A`` -> ``if rank != 0: return`` then ``A`` unindented."""
    def change(tree: ast.Module) -> bool:
        done = False
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not func.body:
                continue
            last = func.body[-1]
            if isinstance(last, ast.If) and not last.orelse and last in _guard_ifs(ast.Module([last], [])) and \
                    not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(func)):
                func.body[-1:] = [ast.If(_negate(last.test), [ast.Return(None)], []), *last.body]
                done = True
        return done
    return _rewrite(project, change)


# --- spellings of expressions -----------------------------------------------------------------------------

def fstring_to_format(project: Project) -> Project | None:
    """``f"epoch {e} loss {l:.3f}"`` -> ``"epoch {} loss {:.3f}".format(e, l)``."""
    def change(tree: ast.Module) -> bool:
        parents = _parents(tree)
        done = False
        for node in list(ast.walk(tree)):
            if not isinstance(node, ast.JoinedStr) or isinstance(parents.get(node), (ast.FormattedValue, ast.JoinedStr)):
                continue
            template, args = "", []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    template += str(part.value).replace("{", "{{").replace("}", "}}")
                    continue
                if not isinstance(part, ast.FormattedValue):
                    break
                spec = ""
                if part.format_spec is not None:
                    if not all(isinstance(v, ast.Constant) for v in part.format_spec.values):
                        break
                    spec = ":" + "".join(str(v.value) for v in part.format_spec.values)
                conv = "" if part.conversion == -1 else "!" + chr(part.conversion)
                template += "{" + conv + spec + "}"
                args.append(part.value)
            else:
                if args:
                    _replace(parents, node, ast.Call(ast.Attribute(ast.Constant(template), "format", ctx=ast.Load()),
                                                     args, []))
                    done = True
        return done
    return _rewrite(project, change)


# positional parameters of the calls whose arguments scripts spell either way
SIGNATURES = {
    "DistributedDataParallel": ("module", "device_ids", "output_device"),
    "DistributedSampler": ("dataset", "num_replicas", "rank", "shuffle", "seed", "drop_last"),
    "DataLoader": ("dataset", "batch_size", "shuffle", "sampler"),
    "init_process_group": ("backend", "init_method", "timeout", "world_size", "rank"),
    "spawn": ("fn", "args", "nprocs", "join"),
    "broadcast": ("tensor", "src"),
    "all_reduce": ("tensor", "op"),
}


def _signatures(tree: ast.Module) -> Callable[[ast.Call], tuple[str, ...] | None]:
    """A lookup of the known signature a call's callee has (through import aliases; not a name the script
    defines itself)."""
    aliases = {a.asname: a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names if a.asname}
    own = _name_stores(tree) - _imported_names(tree)

    def lookup(call: ast.Call) -> tuple[str, ...] | None:
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        return None if name in own else SIGNATURES.get(aliases.get(name, name))
    return lookup


def args_to_keywords(project: Project) -> Project | None:
    """``DistributedSampler(ds, world, rank)`` -> ``DistributedSampler(dataset=ds, num_replicas=world, rank=rank)``."""
    def change(tree: ast.Module) -> bool:
        done, signature = False, _signatures(tree)
        for call in [n for n in ast.walk(tree) if isinstance(n, ast.Call)]:
            sig = signature(call)
            if not sig or not call.args or any(isinstance(a, ast.Starred) for a in call.args) or \
                    len(call.args) > len(sig):
                continue
            call.keywords = [ast.keyword(p, a) for p, a in zip(sig, call.args)] + call.keywords
            call.args = []
            done = True
        return done
    return _rewrite(project, change)


def args_to_positional(project: Project) -> Project | None:
    """``DDP(module=model, device_ids=[r])`` -> ``DDP(model, [r])`` (keywords that fill the leading parameters)."""
    def change(tree: ast.Module) -> bool:
        done, signature = False, _signatures(tree)
        for call in [n for n in ast.walk(tree) if isinstance(n, ast.Call)]:
            sig = signature(call)
            if not sig or any(isinstance(a, ast.Starred) for a in call.args):
                continue
            given = {k.arg: k for k in call.keywords}
            j = len(call.args)
            while j < len(sig) and sig[j] in given:
                call.args.append(given[sig[j]].value)
                call.keywords.remove(given[sig[j]])
                j += 1
                done = True
        return done
    return _rewrite(project, change)


TRANSFORMS: dict[str, Transform] = {
    "identity": identity,
    "rename_synonyms": rename_synonyms,
    "rename_all": rename_all,
    "import_from_style": import_from_style,
    "import_realias": import_realias,
    "import_unqualify": import_unqualify,
    "import_qualify": import_qualify,
    "env_getenv": env_getenv,
    "env_get": env_get,
    "env_subscript": env_subscript,
    "local_rank_option_spelling": local_rank_option_spelling,
    "local_rank_from_argparse": local_rank_from_argparse,
    "wrap_main": wrap_main,
    "inline_main": inline_main,
    "setup_to_function": setup_to_function,
    "setup_to_method": setup_to_method,
    "setup_to_module": setup_to_module,
    "loop_in_trainer": loop_in_trainer,
    "guard_inverted": guard_inverted,
    "guard_flag": guard_flag,
    "guard_walrus": guard_walrus,
    "guard_operands_swapped": guard_operands_swapped,
    "guard_early_return": guard_early_return,
    "fstring_to_format": fstring_to_format,
    "args_to_keywords": args_to_keywords,
    "args_to_positional": args_to_positional,
}


# --- the dev inputs and the verdicts ----------------------------------------------------------------------

@dataclass
class Item:
    """One dev input: a buggy script (its expected ids must stay found) or a correct file/construct (no warning
    may appear, and it must stay known as distributed)."""

    name: str
    kind: str  # "buggy", "construct" or "real"
    project: Project
    expected: frozenset[str] = frozenset()


def dev_items(kinds: tuple[str, ...] = ("buggy", "construct", "real"), cache=None) -> list[Item]:
    """The DEV split of tests/real/buggy, every construct, and the dev real correct files found in ``cache``
    (the manifest's local cache; skipped when absent). Never the test split."""
    from pathlib import Path

    from tests.scan.quality import (
        buggy_files, construct_items, entry_paths, expected_of, header, in_split, manifest_entries,
    )

    items = []
    if "buggy" in kinds:
        for path in buggy_files("dev"):
            assert in_split(header(path, "source") or "", "dev")
            items.append(Item(path.stem, "buggy", Project({path.name: path.read_text(encoding="utf-8")}, path.name),
                              frozenset(expected_of(path))))
    if "construct" in kinds:
        for item in construct_items():
            if item.is_dir():
                files = {p.relative_to(item).as_posix(): p.read_text(encoding="utf-8")
                         for p in sorted(item.rglob("*.py")) if "__pycache__" not in p.parts}
                items.append(Item(item.name, "construct", Project(files, "main.py")))
            else:
                items.append(Item(item.stem, "construct", Project({item.name: item.read_text(encoding="utf-8")},
                                                                  item.name)))
    if "real" in kinds and cache is not None and Path(cache).is_dir():
        for entry in manifest_entries("dev"):
            paths = entry_paths(entry, Path(cache))
            if not all(p.is_file() for p in paths):
                continue
            rels = [entry["path"], *entry.get("with", [])]
            files = {rel: p.read_text(encoding="utf-8", errors="replace") for rel, p in zip(rels, paths)}
            items.append(Item(f"{entry['repo']}/{entry['path']}", "real", Project(files, entry["path"])))
    return items


@dataclass(frozen=True)
class Verdict:
    """What a user sees of one scan: the ids shown (severity warning/error), and whether it is distributed."""

    ids: frozenset[str]
    distributed: bool


def scan_project(project: Project, entry_only: bool = False) -> Verdict:
    """Write the project to a temporary directory and scan all its files (or only the entry file)."""
    import tempfile
    from pathlib import Path

    from tests.scan.quality import shown_findings

    with tempfile.TemporaryDirectory(prefix="ddpts-meta-") as tmp:
        for rel, text in project.files.items():
            target = Path(tmp, rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        paths = [str(Path(tmp, project.entry))] if entry_only else [str(Path(tmp, rel)) for rel in project.files]
        hits, facts = shown_findings(paths)
    return Verdict(frozenset(hits), bool(facts.get("scan.uses_distributed")))


@dataclass
class Change:
    """How a rewrite changed an item's verdict: expected ids no longer found, warnings that appeared,
    and whether the scan stopped seeing a distributed file."""

    lost: frozenset[str] = frozenset()
    gained: frozenset[str] = frozenset()
    undistributed: bool = False

    @property
    def any(self) -> bool:
        return bool(self.lost or self.gained or self.undistributed)


def compare(item: Item, before: Verdict, after: Verdict) -> Change:
    """Expected ids (buggy) found before and missing after; ids shown after and not before (on a buggy script
    only those it does not expect count as false alarms); the distributed flag lost."""
    lost = (before.ids & item.expected) - after.ids if item.kind == "buggy" else frozenset()
    gained = after.ids - before.ids - (item.expected if item.kind == "buggy" else frozenset())
    return Change(frozenset(lost), frozenset(gained), before.distributed and not after.distributed)


# rewrites that move code into another file: the entry scanned alone must still be judged the same
SPLITS_FILES = {"setup_to_module"}
