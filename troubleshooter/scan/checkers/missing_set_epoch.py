"""missing-set-epoch: a shuffling DistributedSampler whose ``set_epoch`` is never called."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import (contains, dataloaders, function_arguments, loader_label,
                                                    local_callee)
from troubleshooter.scan.model import const, dotted, last


class MissingSetEpochChecker(Checker):
    """DistributedSampler(shuffle not False), several epochs, and no ``.set_epoch(`` anywhere in the file."""

    id = "missing-set-epoch"

    def check(self, m):
        if m.project is not None and "set_epoch" in m.project.referenced and not m.methods("set_epoch"):
            return  # through a loader wrapper of the project (LAVIS IterLoader calls sampler.set_epoch)
        moving = [s for s in m.methods("set_epoch") if self._moves_epoch(m, s)]
        samplers = _sampler_sites(m)
        for site in samplers:
            if const(site.kw("shuffle"), default=True) is False:
                continue
            names = self._names_of(m, site)
            fed = next(((dl, how) for dl in dataloaders(m) if (how := self._feeds(m, site, names, dl))), None)
            if fed is None:
                continue
            loader, how = fed
            loader_name = loader_label(loader)
            missed = [s for s in moving if not _reaches(m, s, how)]
            elsewhere = [s for s in moving if s not in missed and _another_samplers(m, s, site, samplers)]
            if len(missed) + len(elsewhere) < len(moving):
                continue  # some set_epoch can reach this sampler
            if self._evaluation_only(m, loader_name):
                continue
            sampler = next(iter(names), None) or f"{loader_name}.{how}"
            epoch_var = (self._epoch_loop(m, loader_name) or self._repeated_training(m)
                         or self._reiterated(m, loader_name) or _reread_where_handed(m, loader))
            if epoch_var is None:
                continue
            fixed = m.methods("set_epoch")
            if missed:
                what = (f"set_epoch is called on {missed[0].recv} (line {missed[0].line}), which is the loader's "
                        f"default sampler: the DistributedSampler sits inside {loader_name}'s batch_sampler, so "
                        f"{loader_name}.batch_sampler.sampler.set_epoch({epoch_var}) is never called")
            elif elsewhere:
                what = (f"set_epoch is only called on {elsewhere[0].recv} (line {elsewhere[0].line}), another "
                        f"DistributedSampler")
            elif fixed:
                what = f"set_epoch is only called at line {fixed[0].line} with an epoch that does not change per epoch"
            else:
                what = f"{sampler}.set_epoch({epoch_var}) is never called"
            yield Hit(site.line, f"{sampler} is a shuffling DistributedSampler but {what}: every epoch repeats the "
                                 "same order on every rank", {"sampler": sampler, "loader": loader_name, "variable": epoch_var})

    @staticmethod
    def _names_of(m, site) -> list[str]:
        """Names the sampler is bound to: ``s = DistributedSampler(...)``, also ``s = DistributedSampler(...) if
        ddp else None``."""
        if site.assigned_to:
            return [site.assigned_to]
        items = [node.targets[0] for node in m.nodes_in(site.ctx.func.node if site.ctx.func else m.tree)
                 if node.__class__ is ast.Assign and node.value is site.node and len(node.targets) == 1
                 and isinstance(node.targets[0], ast.Subscript)]
        return [ast.unparse(t) for t in items] + [b.target for bindings in m.bindings.values() for b in bindings
                                                   if isinstance(b.value, (ast.IfExp, ast.BoolOp))
                                                   and contains(b.value, site.node)]

    @classmethod
    def _feeds(cls, m, site, names: list[str], loader) -> str | None:
        """How the loader receives this sampler: ``"sampler"`` (its ``sampler=``, by keyword or position: the call,
        a name bound to it, or a local function returning it), ``"batch_sampler"`` (a batch sampler built around
        it: ``batch_sampler=BatchSampler(sampler, 32, True)``, a custom class taking it), else None."""
        if cls._is_sampler(m, site, names, loader.kw("sampler")):
            return "sampler"
        given = loader.kw("batch_sampler")
        if isinstance(given, (ast.Name, ast.Attribute)):
            bound = m.binding(dotted(given), loader.line, loader.ctx.func)
            given = bound.value if bound is not None else given
        if isinstance(given, ast.Call) and any(cls._is_sampler(m, site, names, arg) for arg in
                                               [*given.args, *(k.value for k in given.keywords)]):
            return "batch_sampler"
        return None

    @staticmethod
    def _is_sampler(m, site, names: list[str], given: ast.AST | None) -> bool:
        """``given`` is this sampler: the call, a name bound to it, or a local function returning it."""
        if given is None:
            return False
        if given is site.node or (dotted(given) and dotted(given) in names):
            return True
        if isinstance(given, ast.Subscript) and ast.unparse(given) in names:
            return True  # sampler["train"] = DistributedSampler(...) ... DataLoader(..., sampler=sampler["train"])
        made = m.site_of(given) if isinstance(given, ast.Call) else None
        callee = local_callee(m, made) if made is not None else None
        return callee is not None and any(isinstance(n, ast.Return) and n.value is not None and contains(n.value, site.node)
                                          for n in ast.walk(callee.node))

    @staticmethod
    def _evaluation_only(m, loader: str) -> bool:
        """The loader is read only by evaluation passes, whose order does not matter (``DistributedSampler(eval_dataset)``
        in the HF example scripts' ``evaluate()``): loops that never step an optimizer and run without autograd
        (under ``torch.no_grad()``, holding one, or in a function decorated with it)."""
        readers = [loop for loop in m.loops if loader in loop.iter_names] + _read_through_parameters(m, loader)
        return bool(readers) and all(
            not m.is_training_loop(loop.node) and _gradient_free(m, loop) for loop in readers)

    @staticmethod
    def _epoch_loop(m, loader: str) -> str | None:
        """The epoch loop variable, when the script loops over epochs (or re-iterates the loader)."""
        for loop in m.loops:
            if loop.target and "epoch" in loop.target.lower():
                return loop.target
        for loop in m.loops:
            counted = sorted(name for name in loop.iter_names if "epoch" in name.lower())
            if counted:  # for phase in range(self.num_epochs); while epoch < num_epochs
                return loop.target or counted[0]
        for loop in m.loops:
            if loader in loop.iter_names and loop.ctx.loops:
                outer = loop.ctx.loops[-1]
                return dotted(getattr(outer, "target", None)) or "epoch"
        return None

    @staticmethod
    def _reiterated(m, loader: str) -> str | None:
        """"epoch" when the loader is read over and over without an epoch loop: ``itertools.cycle(loader)``, or
        ``iter(loader)`` re-created inside a loop (iteration-based training restarting it on StopIteration)."""
        for site in m.calls:
            if not site.node.args or dotted(site.node.args[0]) != loader:
                continue
            if site.name in m.P.loader_repeaters or (site.name in m.P.loader_reiterators and site.ctx.loops):
                return "epoch"
        return None

    @staticmethod
    def _moves_epoch(m, site) -> bool:
        """A set_epoch call that can change the epoch: not a constant (``set_epoch(0)``), and not a single call made
        before the epoch loop of its own function (``sampler.set_epoch(start_epoch)`` then ``for epoch in ...``)."""
        value = site.arg(0, "epoch")
        if value is not None and const(value, default=...) is not ...:
            return False
        if site.ctx.loops:
            return True
        return not any(loop.ctx.func is site.ctx.func and loop.node.lineno > site.line and not loop.ctx.loops
                       and loop.target and "epoch" in loop.target.lower() for loop in m.loops)

    @staticmethod
    def _repeated_training(m) -> str | None:
        """"epoch" when a training loop runs more than once: nested in another loop, or in a function called from
        a loop (``while not done: self._train_epoch()``); the loader it reads is then iterated again each time."""
        for loop in m.loops:
            if not m.is_training_loop(loop.node):
                continue
            if loop.ctx.loops:
                return dotted(getattr(loop.ctx.loops[-1], "target", None)) or "epoch"
            func = loop.ctx.func
            if func is not None and any(c.ctx.loops and local_callee(m, c) is func for c in m.calls):
                return "epoch"
        return None


def _read_through_parameters(m, loader: str) -> list:
    """The loops that read the loader through the parameter of a local function it is handed to
    (``evaluate(model, val_loader, cfg)`` -> ``def evaluate(model, loader, cfg): for x in loader:``)."""
    found = []
    for site in m.calls:
        if not any(dotted(arg) == loader for arg in [*site.node.args, *(k.value for k in site.node.keywords)]):
            continue
        callee, pairs = function_arguments(m, site)
        if callee is None:
            continue
        params = {param for arg, param in pairs if dotted(arg) == loader}
        params |= {k.arg for k in site.node.keywords if k.arg and dotted(k.value) == loader}
        found += [loop for loop in m.loops if loop.ctx.func is callee and params & loop.iter_names]
    return found


def _reread_where_handed(m, loader) -> str | None:
    """"epoch" when a local function the loader is handed to reads it in a loop nested in another loop of that
    function (``while True: for batch in loader: yield batch``): every pass of the outer loop starts the loader over.
    Handed by name, or as the call of a local factory that returns it (``loop_over_data(create_data_loader(cfg))``,
    goodfire-ai/spd#104)."""
    for site in m.calls:
        callee, pairs = function_arguments(m, site)
        if callee is None:
            continue
        params = {param for arg, param in pairs if _is_loader(m, arg, loader, site)}
        params |= {k.arg for k in site.node.keywords if k.arg and _is_loader(m, k.value, loader, site)}
        if any(loop.ctx.func is callee and params & loop.iter_names and loop.ctx.loops for loop in m.loops):
            return "epoch"
    return None


def _is_loader(m, arg: ast.AST, loader, site) -> bool:
    """``arg`` (handed over by ``site``) is this DataLoader: the name it is bound to, the call itself, a call of a
    local function returning it, or a name bound to such a call (``train_dl = create_data_loader(64)``)."""
    if loader.assigned_to and dotted(arg) == loader.assigned_to:
        return True
    if arg is loader.node:
        return True
    if isinstance(arg, ast.Name):
        bound = m.binding(arg.id, site.line, site.ctx.func)
        return bound is not None and isinstance(bound.value, ast.Call) and _is_loader(m, bound.value, loader, site)
    made = m.site_of(arg) if isinstance(arg, ast.Call) else None
    callee = local_callee(m, made) if made is not None else None
    return callee is not None and any(isinstance(n, ast.Return) and n.value is loader.node for n in ast.walk(callee.node))


def _gradient_free(m, loop) -> bool:
    """The loop runs without autograd: inside a gradient-free block, holding one, or in a function decorated with one."""
    free = m.P.gradient_free_contexts
    func = loop.ctx.func
    decorators = getattr(func.node, "decorator_list", []) if func is not None else []
    return (any(w in free for w in loop.ctx.withs) or any(s.name in free for s in m.sites_in(loop.node))
            or any(m.qual(d.func if isinstance(d, ast.Call) else d) in free for d in decorators))


def _reaches(m, site, how: str) -> bool:
    """A set_epoch call can reach a sampler the loader received as ``how``: not when it is made on
    ``<loader>.sampler`` while the DistributedSampler sits inside the loader's ``batch_sampler`` (the loader's
    ``.sampler`` is then its default SequentialSampler; open-mmlab/mmcv#472). ``self.sampler`` holding the
    sampler itself is not a loader's."""
    owner, dot, attr = (site.recv or "").rpartition(".")
    if how != "batch_sampler" or not dot or attr != "sampler":
        return True
    loaders = {last(loader_label(dl)) for dl in dataloaders(m)} | {last(dl.assigned_to) for dl in dataloaders(m)
                                                                   if dl.assigned_to}
    name = last(owner)
    return not (name in loaders or "loader" in name.lower())


def _another_samplers(m, call, sampler, samplers) -> bool:
    """The set_epoch call is made on a name every binding of which is another DistributedSampler of the file
    (``val_sampler.set_epoch(epoch)`` while the training loader's ``train_sampler`` is never re-seeded)."""
    bindings = m.bindings.get(call.recv or "", ())
    others = {id(s.node) for s in samplers if s is not sampler}
    return bool(bindings) and all(id(b.value) in others for b in bindings)


def _sampler_sites(m):
    """DistributedSampler calls, also through a local alias of the class
    (``sampler_cls = RandomSampler if args.local_rank == -1 else DistributedSampler`` ... ``sampler_cls(data)``), and
    of the script's own subclasses of one whose order still follows the epoch."""
    samplers = m.P.distributed_samplers | _epoch_subclasses(m)
    aliases = {target for target, bindings in m.bindings.items() for b in bindings
               if isinstance(b.value, (ast.Name, ast.Attribute, ast.IfExp, ast.BoolOp)) and any(
                   isinstance(n, (ast.Name, ast.Attribute)) and m.qual(n) in samplers for n in ast.walk(b.value))}
    return [site for site in m.calls if site.name in samplers or (site.name in aliases and site.recv is None)]


def _epoch_subclasses(m) -> set[str]:
    """The script's classes derived (directly or through each other) from a DistributedSampler that keep its
    epoch-seeded order: no ``__iter__`` of their own, or one that reads ``self.epoch`` or calls ``super()``. A
    subclass with its own order (a fixed seed, no epoch) does not need set_epoch."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, node in m.classes.items():
            if name in found or not any(m.qual(b) in m.P.distributed_samplers or dotted(b) in found
                                        for b in node.bases):
                continue
            own = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__iter__"), None)
            if own is None or any((isinstance(n, ast.Attribute) and n.attr == "epoch") or
                                  (isinstance(n, ast.Name) and n.id == "super") for n in ast.walk(own)):
                found.add(name)
                changed = True
    return found


CHECKER = MissingSetEpochChecker()
