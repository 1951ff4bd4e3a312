"""no-barrier-before-checkpoint-load: rank 0 saves a checkpoint and every rank loads it with no barrier between."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import local_callee
from troubleshooter.scan.model import RANK0, CallSite, FuncInfo, ModuleIndex, dotted, source

_SIMPLE = (ast.Name, ast.Attribute, ast.Constant, ast.JoinedStr)
# Rank 0 broadcasting after its save also makes the others wait for it.
_BROADCASTS = ("broadcast", "broadcast_object_list")


@dataclass
class Event:
    """A save on rank 0 only, or a load on every rank: the call in the caller, and the path when known."""

    site: CallSite
    path: ast.AST | None
    through: str | None = None  # the local function that does it, when not done directly


class NoBarrierBeforeCheckpointLoadChecker(Checker):
    """A rank-0-only torch.save, then torch.load on every rank in the same function, no barrier in between;
    either may happen inside a local function or method (``save_on_master(...)``, ``manager.load(...)``)."""

    id = "no-barrier-before-checkpoint-load"

    def check(self, m):
        saves = list(self._saves(m))
        for load in self._loads(m):
            for save in saves:
                if save.site.ctx.func is not load.site.ctx.func:
                    continue
                if save.site.line < load.site.line:
                    if self._synced_between(m, save.site, load.site):
                        continue
                else:  # the load at the top of the next pass of a loop that saves at its end
                    loop = next((lp for lp in reversed(save.site.ctx.loops) if lp in load.site.ctx.loops), None)
                    if loop is None or self._synced_around(m, loop, save.site, load.site):
                        continue
                if not self._same_file(save, load):
                    continue
                text = source(load.path) if load.path is not None else "the checkpoint"
                what = f"{load.through}() loads {text}" if load.through else f"torch.load({text})"
                saved = f"{save.through}() at line {save.site.line}" if save.through else f"line {save.site.line}"
                yield Hit(load.site.line, f"{what} on every rank right after rank 0 saves it ({saved}) with no "
                                          "barrier: the other ranks can read a missing or half-written file",
                          {"variable": text})
                break

    @staticmethod
    def _same_file(save: Event, load: Event) -> bool:
        if save.path is not None and load.path is not None:
            return _same_path(save.path, load.path, _choices(save.site.ctx.func))
        return save.through is not None  # a save helper then a load: the pair the helper is for

    def _saves(self, m: ModuleIndex):
        for site in m.calls_named(["torch.save"]):
            if site.rank0 and site.ctx.sides:
                yield Event(site, site.arg(1, "f"))
        for func, inner in self._helpers(m, rank0=True):
            for call in self._calls_of(m, func):
                if not call.rank_conditional:
                    yield Event(call, _argument_for(func, call, inner.arg(1, "f")), func.name)
        for site in m.calls_named(["torch.save"]):  # a plain save helper called under ``if rank == 0:``
            func = site.ctx.func
            if func is None or func.name == "<class>" or site.ctx.sides or not m.P.matches("save_helper_names",
                                                                                             func.name):
                continue
            for call in self._calls_of(m, func):
                if call.rank0 and call.ctx.sides:
                    yield Event(call, _argument_for(func, call, site.arg(1, "f")), func.name)

    def _loads(self, m: ModuleIndex):
        for site in m.calls_named(["torch.load"]):
            if not site.rank_conditional:
                yield Event(site, site.arg(0, "f"))
        for func, inner in self._helpers(m, rank0=False):
            for call in self._calls_of(m, func):
                if not call.rank_conditional:
                    yield Event(call, _argument_for(func, call, inner.arg(0, "f")), func.name)

    @staticmethod
    def _helpers(m: ModuleIndex, rank0: bool):
        """(local function, its torch.save on rank 0 | its torch.load on every rank), with no barrier after/before."""
        name = "torch.save" if rank0 else "torch.load"
        names = "save_helper_names" if rank0 else "load_helper_names"
        for site in m.calls_named([name]):
            func = site.ctx.func
            if func is None or func.name == "<class>" or not m.P.matches(names, func.name):
                continue  # only a helper that is about saving / loading (not a whole train())
            if rank0 != any(side == RANK0 for _, side, _ in site.ctx.sides) or (not rank0 and site.ctx.sides):
                continue
            syncs = [s for s in m.sites_in(func.node) if s.method in m.P.barrier_methods and not s.rank_conditional]
            if any((s.line > site.line) if rank0 else (s.line < site.line) for s in syncs):
                continue  # the helper waits for the others itself
            yield func, site

    @staticmethod
    def _calls_of(m: ModuleIndex, func: FuncInfo) -> list[CallSite]:
        return [c for c in m.calls if c.method == func.name and local_callee(m, c) is func]

    @staticmethod
    def _synced_between(m, save, load) -> bool:
        return any(save.line < site.line < load.line for site in _syncs(m, m.calls))

    @staticmethod
    def _synced_around(m, loop: ast.AST, save, load) -> bool:
        """A barrier in the loop after the save or before the load (the wrap-around path between them)."""
        return any(site.line > save.line or site.line < load.line for site in _syncs(m, m.sites_in(loop)))


def _syncs(m: ModuleIndex, sites: list[CallSite]) -> list[CallSite]:
    """The calls among ``sites`` that make the other ranks wait: a barrier, a broadcast, a local function with one."""
    barriers = m.P.barrier_methods
    barrier_funcs = {name for name, infos in m.functions.items()
                     if any(s.method in barriers for info in infos for s in m.sites_in(info.node))}
    return [s for s in sites if s.method in barriers or s.method in _BROADCASTS or s.method in barrier_funcs]


_PATH_WRAPPERS = ("str", "os.fspath", "Path", "pathlib.Path")


def _same_path(saved: ast.AST, loaded: ast.AST, choices: dict[str, set]) -> bool:
    """Both expressions name the same file: equal once ``str()`` / ``Path()`` wrappers are dropped, part by part
    through ``/`` and ``os.path.join``, a local name matching any literal it is assigned (``name = "best.pth" if
    early else "last.pth"``)."""
    saved, loaded = _unwrapped(saved), _unwrapped(loaded)
    if isinstance(saved, ast.BinOp) and isinstance(loaded, ast.BinOp):
        return type(saved.op) is type(loaded.op) and _same_path(saved.left, loaded.left, choices) \
            and _same_path(saved.right, loaded.right, choices)
    if isinstance(saved, ast.Call) and isinstance(loaded, ast.Call) and dotted(saved.func) == dotted(loaded.func) \
            == "os.path.join" and len(saved.args) == len(loaded.args):
        return all(_same_path(a, b, choices) for a, b in zip(saved.args, loaded.args))
    if isinstance(saved, ast.Name) and isinstance(loaded, ast.Constant) and loaded.value in choices.get(saved.id, ()):
        return True
    return isinstance(loaded, (*_SIMPLE, ast.BinOp, ast.Call)) and ast.dump(saved) == ast.dump(loaded)


def _unwrapped(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.Call) and dotted(node.func) in _PATH_WRAPPERS and len(node.args) == 1:
        node = node.args[0]
    return node


def _choices(func: FuncInfo | None) -> dict[str, set]:
    """Local names of ``func`` assigned string literals (or a conditional choice between two)."""
    out: dict[str, set] = {}
    if func is None or func.name == "<class>":
        return out
    for node in ast.walk(func.node):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values = [node.value.body, node.value.orelse] if isinstance(node.value, ast.IfExp) else [node.value]
            out.setdefault(node.targets[0].id, set()).update(
                v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return out


def _argument_for(func: FuncInfo, call: CallSite, inner: ast.AST | None) -> ast.AST | None:
    """The caller's expression for a helper's path parameter (None when the helper builds the path itself)."""
    name = dotted(inner) if inner is not None else None
    params = [a.arg for a in func.node.args.args]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    if name in params:
        return call.arg(params.index(name), name)
    return None


CHECKER = NoBarrierBeforeCheckpointLoadChecker()
