"""missing-distributed-sampler: a training DataLoader in a DDP script without a DistributedSampler."""

from __future__ import annotations

import ast
import os
from functools import lru_cache
from pathlib import Path

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import (
    contains, dataloaders, dataset_name, derivation, loader_label, local_callee, resolved_const, split_by_rank,
    truthy_literal,
)
from troubleshooter.scan.checkers._switches import switch_value
from troubleshooter.scan.model import const, dotted, last
from troubleshooter.scan.source import parse_python


class MissingDistributedSamplerChecker(Checker):
    """A loader that trains (shuffle=True, a ``train`` name, or iterated around ``backward()``) with no sampler."""

    id = "missing-distributed-sampler"

    def check(self, m):
        sharded = self._sharded_names(m)
        for site in dataloaders(m):
            if (site.assigned_to and site.assigned_to in sharded) or any(
                    _shards(m, s) and contains(s.node, site.node) for s in m.calls) or _returned_to_a_sharder(m, site):
                continue  # handed to accelerator.prepare / fabric.setup_dataloaders, which shard it
            spread = _spread_keywords(m, site)
            if spread is None:
                continue  # **kwargs of unknown content: cannot tell
            given = [_keyword_or_position(m, site, "sampler", 3), _keyword_or_position(m, site, "batch_sampler", 4),
                     spread.get("sampler"), spread.get("batch_sampler")]
            sampler = next((g for g in given if g is not None and const(g, default=...) is not None),
                           next((g for g in given if g is not None), None))
            local = self._local_sampler(m, sampler, site)
            if sampler is not None and const(sampler, default=...) is not None and not local and not _always_none(
                    m, sampler, site):
                continue
            if (len(site.node.args) > 2 and site.name not in m.P.torch_signature_loaders) or site.rank0:
                continue  # positional arguments of an unknown signature: cannot tell
            if sampler is None and _batches_itself(m, site):
                continue  # batch_size=None: the dataset yields whole batches (a pipeline that shards by rank itself)
            dataset = dataset_name(site)
            if dataset and self._sharded_or_iterable(m, dataset, site):
                continue
            given = site.arg(0, "dataset")
            if isinstance(given, ast.Call) and m.mentions_rank(given):
                continue  # DataLoader(Subset(data, parts[rank])): sharded by hand (uneven-last-batch's concern)
            if _rank_sliced_seeds(m, site):
                continue  # NeighborLoader(data, input_nodes=idx.split(n)[rank]): the seeds are sharded by hand
            if isinstance(given, ast.Call) and _iterable_class(m, given):
                continue  # DataLoader(IterableDataset(...)) built inline: an iterable dataset shards itself
            if not local and not self._trains(m, site):
                continue
            if (sampler is None or const(sampler, default=...) is None) and _other_arm_shards(m, site):
                continue  # ``if args.distributed: ...DistributedSampler... else: DataLoader(ds, shuffle=True)``
            loader = loader_label(site)
            what = (f"uses {local}, a single-process sampler, instead of a DistributedSampler: every rank draws from "
                    f"all of {dataset or 'the dataset'}" if local else
                    f"has no DistributedSampler: every rank iterates all of {dataset or 'the dataset'} in the same order")
            yield Hit(site.line, f"{loader} {what}, so the ranks train on the same samples and an epoch does no "
                                 "more work than on one GPU",
                      {"loader": loader, "dataset": dataset or "dataset", "sampler": "sampler"})

    def check_handled(self, m):
        """Under a framework that shards the loaders handed to its ``prepare``: a training loader handed over only
        inside a generator of the script (``prepare(cycle(loader))``), or a training loader built in the function
        that calls ``prepare`` and never handed to it (``model, opt = accelerator.prepare(model, opt)``). prepare
        returns what it does not know unchanged, so that loader is never sharded."""
        yield from self._never_prepared(m)
        yield from self._overridden_loader_hooks(m)
        for site in m.calls:
            if not _shards(m, site):
                continue
            for arg in [*site.node.args, *(k.value for k in site.node.keywords)]:
                loader = self._behind_generator(m, arg, site)
                if loader is not None and self._trains(m, loader):
                    name = loader_label(loader)
                    yield Hit(loader.line, f"{name} reaches {site.method}() only inside a generator, which it returns "
                                           "unchanged: the loader is not sharded, so every rank iterates all of "
                                           f"{dataset_name(loader) or 'the dataset'}; prepare the DataLoader first, "
                                           "then wrap it", {"loader": name, "dataset": dataset_name(loader) or "dataset",
                                                            "sampler": "sampler"})

    @staticmethod
    def _overridden_loader_hooks(m):
        """A framework trainer subclass overriding the method that builds the training loader
        (``framework_loader_hooks``: HF ``Trainer.get_train_dataloader``) with a plain DataLoader that has no
        sampler and goes through no sharding call: the framework shards only in its own implementation, which the
        override replaces, so every rank trains on all of the dataset."""
        for site in dataloaders(m):
            func = site.ctx.func
            if func is None or func.cls is None or func.name not in m.P.framework_loader_hooks:
                continue
            cls = m.classes.get(func.cls)
            if cls is None or not cls.bases or any(_shards(m, s) for s in m.sites_in(func.node)):
                continue
            given = [_keyword_or_position(m, site, "sampler", 3), _keyword_or_position(m, site, "batch_sampler", 4)]
            if any(g is not None and const(g, default=...) is not None for g in given) or any(
                    k.arg is None for k in site.node.keywords):
                continue
            name = loader_label(site)
            yield Hit(site.line, f"{func.cls}.{func.name}() returns {name} with no sampler: overriding it replaces "
                                 "the framework's own loader, which is the one that shards the data, so every rank "
                                 f"trains on all of {dataset_name(site) or 'the dataset'}; build it through the "
                                 "framework (accelerator.prepare / its sampler) or call super()",
                      {"loader": name, "dataset": dataset_name(site) or "dataset", "sampler": "sampler"})

    def _never_prepared(self, m):
        """Training loaders of a function that calls a sharding ``prepare`` but does not pass them to it. Quiet when
        any sharding call takes ``*args`` or anything but names (what it shards cannot be told)."""
        preparers = [s for s in m.calls if _shards(m, s)]
        if not preparers or any(not isinstance(a, (ast.Name, ast.Attribute)) for s in preparers
                                for a in [*s.node.args, *(k.value for k in s.node.keywords)]):
            return
        sharded = self._sharded_names(m)
        funcs = {id(s.ctx.func) for s in preparers if s.ctx.func is not None}
        for site in dataloaders(m):
            if id(site.ctx.func) not in funcs or not site.assigned_to or site.assigned_to in sharded or site.rank0:
                continue
            if site.assigned_to.rpartition(".")[2] in {n.rpartition(".")[2] for n in sharded}:
                continue  # ``self.train_loader`` prepared as ``train_loader`` elsewhere: same loader, probably
            if _returned_to_a_sharder(m, site):
                continue  # returned, and prepared by the caller
            if self._trains(m, site):
                name = loader_label(site)
                yield Hit(site.line, f"{name} is never handed to {preparers[0].method}(), so the framework does not "
                                     f"shard it: every rank iterates all of {dataset_name(site) or 'the dataset'}; "
                                     f"pass it to {preparers[0].method}() with the model and optimizer",
                          {"loader": name, "dataset": dataset_name(site) or "dataset", "sampler": "sampler"})

    @staticmethod
    def _behind_generator(m, arg, prepare):
        """The DataLoader call a prepare argument wraps in a local generator function (one with ``yield``):
        ``cycle(loader)`` given directly or through a name bound to it."""
        if isinstance(arg, (ast.Name, ast.Attribute)):
            binding = m.binding(dotted(arg), prepare.line, prepare.ctx.func)
            arg = binding.value if binding is not None else arg
        made = m.site_of(arg) if isinstance(arg, ast.Call) else None
        callee = local_callee(m, made) if made is not None else None
        if callee is None or not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(callee.node)):
            return None
        for given in made.node.args:
            if isinstance(given, (ast.Name, ast.Attribute)):
                bound = m.binding(dotted(given), made.line, made.ctx.func)
                given = bound.value if bound is not None else given
            loader = m.site_of(given) if isinstance(given, ast.Call) else None
            if loader is not None and loader.name in m.P.dataloaders:
                return loader
        return None

    @staticmethod
    def _local_sampler(m, sampler, site) -> str | None:
        """A single-process random sampler (RandomSampler, WeightedRandomSampler ...) given to the loader: every
        rank draws from the whole dataset. Returns its name."""
        if sampler is None:
            return None
        name = dotted(sampler)
        values = [b.value for b in m.bindings.get(name, ()) if b.func is site.ctx.func] if name else [sampler]
        found = None
        local = {id(v): _local_sampler_made(m, v) for v in values}
        if name and any(local.values()):  # ``if sampler is None: sampler = DistributedSampler(...)`` never runs
            values = [v for v in values if local[id(v)] or not _only_if_none(site.ctx.func, name, v)]
        for value in values or [sampler]:  # every assignment (``if distributed: ... else: RandomSampler``) must be one
            made = local.get(id(value)) or _local_sampler_made(m, value)
            if made is None:
                return None
            found = made
        return found

    @staticmethod
    def _sharded_names(m) -> set[str]:
        """Names passed to a call that shards loaders (``accelerator.prepare(model, opt, loader)``), and what a
        framework's prepare returns for them."""
        names = set()
        for site in m.calls:
            if _shards(m, site) and (site.recv is not None or site.name != site.method):
                names.update(filter(None, (dotted(a) for a in site.node.args)))
                names.update(filter(None, (dotted(k.value) for k in site.node.keywords)))
        return names

    @staticmethod
    def _sharded_or_iterable(m, dataset: str, site) -> bool:
        if _under_iterable_test(m, dataset, site):
            return True  # ``if isinstance(dataset, IterableDataset): DataLoader(dataset, ...)``
        return _sharded_upstream(m, m.binding(dataset, site.line, site.ctx.func))

    @classmethod
    def _trains(cls, m, site) -> bool:
        shuffle = _keyword_or_position(m, site, "shuffle", 2)
        if truthy_literal(shuffle) or resolved_const(m, shuffle, site) is True:
            return True
        name = site.assigned_to
        if not name:
            return cls._built_for_training(m, site)
        if "train" in name.lower():
            return True
        return cls._iterated_by_training(m, name)

    @staticmethod
    def _iterated_by_training(m, name: str) -> bool:
        names = _wrapping_names(m, name)
        for loop in m.loops:  # iterated by a loop that steps (directly or in a local method it calls)
            if names & loop.iter_names and (any(s.method == "backward" for s in m.sites_in(loop.node))
                                            or m.is_training_loop(loop.node)):
                return True
        return False

    @classmethod
    def _built_for_training(cls, m, site) -> bool:
        """A loader a local builder returns (``return DataLoader(ds, shuffle=is_train)``): it trains when a call
        passes True for the shuffle parameter, or its result is a training loader (a ``train`` name, or iterated
        by a loop that steps)."""
        func = site.ctx.func
        if func is None or not any(isinstance(n, ast.Return) and n.value is site.node for n in ast.walk(func.node)):
            return False
        shuffle = dotted(site.kw("shuffle"))
        params = [a.arg for a in func.node.args.args]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        for call in m.calls:
            if local_callee(m, call) is not func:
                continue
            given = call.kw(shuffle) if shuffle else None
            if given is None and shuffle in params and params.index(shuffle) < len(call.node.args):
                given = call.node.args[params.index(shuffle)]
            if truthy_literal(given) or (call.assigned_to and (
                    "train" in call.assigned_to.lower() or cls._iterated_by_training(m, call.assigned_to))):
                return True
        return False


def _other_arm_shards(m, site) -> bool:
    """The loader is the one-process run's: it sits in one arm of an ``if`` on the distributed state whose other arm
    builds a distributed sampler or a loader given a sampler (``if args.distributed: ... DistributedSampler ... else:
    DataLoader(ds, shuffle=True)``), or it follows, in the same function, such an ``if`` whose arm returns."""
    for branch in m.distributed_ifs:
        if not contains(branch, site.node):
            if (branch.body and branch.body[-1].__class__ is ast.Return and branch.lineno < site.line
                    and site.ctx.func is not None and contains(site.ctx.func.node, branch)
                    and _builds_in(m, branch.body)):
                return True
            continue
        for arm, other in ((branch.body, branch.orelse), (branch.orelse, branch.body)):
            if any(contains(stmt, site.node) for stmt in arm) and _builds_in(m, other):
                return True
    return False


def _builds_in(m, stmts: list[ast.stmt]) -> bool:
    return any(_builds_sharded_loader(m, s) for stmt in stmts for s in m.sites_in(stmt))


def _builds_sharded_loader(m, site) -> bool:
    """A distributed sampler, or a loader handed a (non-None) sampler or batch sampler."""
    if site.name in m.P.distributed_samplers:
        return True
    return site.name in m.P.dataloaders and any(
        given is not None and const(given, default=...) is not None
        for given in (_keyword_or_position(m, site, "sampler", 3), _keyword_or_position(m, site, "batch_sampler", 4)))


def _wrapping_names(m, name: str, depth: int = 2) -> set[str]:
    """The loader's name and the names bound to a call that takes it first, twice removed: a device loader or
    prefetcher (``device_loader = pl.MpDeviceLoader(loader, device)``, ``batches = DataPrefetcher(loader)``,
    ``pl.ParallelLoader(loader, [d]).per_device_loader(d)``) yields the loader's own batches, so iterating it
    iterates the loader. Calls that only measure it (``loader_measures``: ``len``) are not."""
    names = {name}
    for _ in range(depth):
        grown = {site.assigned_to for site in m.calls
                 if site.assigned_to and site.assigned_to not in names and site.name not in m.P.loader_measures
                 and _takes_first(site.node, names)}
        if not grown:
            break
        names |= grown
    return names


def _takes_first(call: ast.Call, names: set[str]) -> bool:
    """``f(x, ...)`` or ``f(x, ...).method(...)`` with ``x`` one of ``names``."""
    inner = call.func.value if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call) else None
    return any(c.args and isinstance(c.args[0], ast.Name) and c.args[0].id in names for c in (call, inner) if c)


def _shards(m, site) -> bool:
    """A call that shards the loaders handed to it: a framework's ``prepare`` / ``setup_dataloaders`` (not a
    hand-written ``prepare`` of the script's own class that only wraps the model in DDP and returns the loader)."""
    if site.method not in m.P.loader_sharders:
        return False
    callee = local_callee(m, site)
    if callee is None:
        return _foreign_method_shards(m, site)
    seen, todo = {id(callee)}, [callee]
    while todo:  # the method, and the local functions it calls
        for inner in m.sites_in(todo.pop().node):
            if inner.name in m.P.distributed_samplers or inner.name in m.P.dataloaders or (
                    inner.method in m.P.loader_sharders and local_callee(m, inner) is None):
                return True
            further = local_callee(m, inner)
            if further is not None and id(further) not in seen:
                seen.add(id(further))
                todo.append(further)
    return False


def _keyword_or_position(m, site, keyword: str, position: int) -> ast.AST | None:
    """A DataLoader argument given by keyword, or by position for a loader with torch's signature
    (``DataLoader(ds, 64, False, sampler)``)."""
    return site.kw(keyword) if site.name not in m.P.torch_signature_loaders else site.arg(position, keyword)


def _foreign_method_shards(m, site) -> bool:
    """``accelerator.prepare(...)`` on an object of a class from a local module of the project (a hand-written
    accelerator in ``utils.py``): that method shards loaders only if it builds a sampler or a loader, or calls a
    sharder itself. True when it cannot be read (a library's class, a file not found)."""
    binding = m.binding(site.recv, site.line, site.ctx.func) if site.recv and "." not in site.recv else None
    made = m.site_of(binding.value) if binding is not None and isinstance(binding.value, ast.Call) else None
    module, _, cls = made.name.rpartition(".") if made is not None and made.name else ("", "", "")
    local = m.project.local_modules if m.project is not None else ()
    if not module or module not in local:
        return True
    method = _method_in_module(os.path.dirname(m.path), module, cls, site.method)
    if method is None:
        return True
    words = {last(n) for n in (*m.P.distributed_samplers, *m.P.dataloaders, *m.P.loader_sharders)}
    return any(isinstance(n, ast.Call) and last(dotted(n.func) or "") in words for n in ast.walk(method))


@lru_cache(maxsize=64)
def _parsed(path: str) -> ast.Module | None:
    try:
        return parse_python(Path(path).read_bytes(), path)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _method_in_module(folder: str, module: str, cls: str, method: str) -> ast.AST | None:
    """The ``def method`` of ``class cls`` in the project file ``module`` names (beside the scanned file)."""
    base = os.path.join(folder, *module.split("."))
    path = next((f for f in (base + ".py", os.path.join(base, "__init__.py")) if os.path.isfile(f)), None)
    tree = _parsed(path) if path else None
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return next((f for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                         and f.name == method), None)
    return None


def _local_sampler_made(m, value: ast.AST) -> str | None:
    """The single-process sampler class an expression builds: the call itself, one it wraps
    (``BatchSampler(RandomSampler(ds), ...)``), or what every ``return`` of a local function or method called
    here builds (``self.get_sampler(dataset)``)."""
    made = m.site_of(value) if isinstance(value, ast.Call) else None
    callee = local_callee(m, made) if made is not None and made.name not in m.P.local_samplers else None
    if callee is not None:
        returns = [n.value for n in ast.walk(callee.node) if isinstance(n, ast.Return) and n.value is not None]
        kinds = [_local_sampler_made(m, r) if isinstance(r, ast.Call) and (inner := m.site_of(r)) is not None
                 and local_callee(m, inner) is None else None for r in returns]
        return kinds[0] if kinds and all(kinds) else None
    while made is not None and made.name not in m.P.local_samplers:
        inner = made.arg(0, "sampler")  # BatchSampler(RandomSampler(ds), ...)
        made = m.site_of(inner) if isinstance(inner, ast.Call) else None
    return made.name.rpartition(".")[2] if made is not None else None


def _only_if_none(func, name: str, value: ast.AST) -> bool:
    """``value`` is assigned to ``name`` only under ``if name is None ...:`` (a fallback for a missing sampler)."""
    root = func.node if func is not None else None
    for node in ast.walk(root) if root is not None else ():
        if not isinstance(node, ast.If):
            continue
        test = node.test.value if isinstance(node.test, ast.NamedExpr) else node.test  # ``if (fallback := ...):``
        tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        if any(isinstance(t, ast.Compare) and dotted(t.left) == name and isinstance(t.ops[0], ast.Is)
               and const(t.comparators[0], default=...) is None for t in tests) and any(
                contains(stmt, value) for stmt in node.body):
            return True
    return False



def _spread_keywords(m, site) -> dict[str, ast.AST] | None:
    """The keywords a loader receives through ``**name``, when every such name is bound in the same function to a
    dict literal with string keys or a ``dict(k=v)`` call and never changed after (no ``name[k] = ...``,
    ``name.update(...)``); ``{}`` without any; None when they cannot be told."""
    found: dict[str, ast.AST] = {}
    for keyword in site.node.keywords:
        if keyword.arg is not None:
            continue
        name = keyword.value.id if isinstance(keyword.value, ast.Name) else None
        binding = m.binding(name, site.line, site.ctx.func) if name else None
        value = binding.value if binding is not None else None
        if isinstance(value, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys):
            found.update((k.value, v) for k, v in zip(value.keys, value.values))
        elif isinstance(value, ast.Call) and dotted(value.func) == "dict" and not value.args and all(
                k.arg for k in value.keywords):
            found.update((k.arg, k.value) for k in value.keywords)
        elif isinstance(value, ast.Call) and (built := _kwargs_built_by_helper(m, value)) is not None:
            found.update(built)
        else:
            return None
        scope = site.ctx.func.node if site.ctx.func else m.tree
        for node in ast.walk(scope):
            target = node.value if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) else (
                node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("update", "setdefault", "__setitem__") else None)
            if isinstance(target, ast.Name) and target.id == name:
                return None
    return found


def _kwargs_built_by_helper(m, call: ast.Call) -> dict[str, ast.AST] | None:
    """The keys a local helper's returned dict holds (``def get_dataloader_kwargs(cfg, ds): kwargs = {};
    if cfg.enable_ddp: kwargs["sampler"] = DistributedSampler(ds); ...; return kwargs``): its one returned name,
    bound to an empty or literal dict and filled by ``kwargs["key"] = value`` stores. A store under an ``if`` that
    the configuration decides against (a command-line option's or a config class field's unchanged default) is
    left out; under any other ``if`` it counts (the arm may run). None when the helper does anything else with
    the dict."""
    site = m.site_of(call)
    helper = local_callee(m, site) if site is not None else None
    if helper is None:
        return None
    returns = [n for n in ast.walk(helper.node) if isinstance(n, ast.Return)]
    if not returns or any(not isinstance(n.value, ast.Name) for n in returns) or len({n.value.id for n in returns}) != 1:
        return None
    name = returns[0].value.id
    keys: dict[str, ast.AST] = {}
    for node, tests in _statements_with_tests(helper.node.body, ()):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            if not (isinstance(node.value, ast.Dict) and all(isinstance(const(k, default=...), str) for k in node.value.keys)):
                return None
            keys.update((const(k), v) for k, v in zip(node.value.keys, node.value.values))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
                and dotted(node.targets[0].value) == name:
            key = const(node.targets[0].slice, default=...)
            if not isinstance(key, str):
                return None
            if not any(_decided_against(m, test, arm) for test, arm in tests):
                keys[key] = node.value
        elif any(isinstance(n, ast.Attribute) and dotted(n.value) == name for n in ast.walk(node)):
            return None  # kwargs.update(...), kwargs.pop(...)
    return keys


def _statements_with_tests(body: list[ast.stmt], tests: tuple):
    """Each simple statement of ``body`` with the ``(if-test, arm)`` pairs around it (arm 0: body, 1: else)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from _statements_with_tests(stmt.body, (*tests, (stmt.test, 0)))
            yield from _statements_with_tests(stmt.orelse, (*tests, (stmt.test, 1)))
        elif isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try)):
            for block in ("body", "orelse", "finalbody"):
                yield from _statements_with_tests(getattr(stmt, block, []) or [], tests)
        else:
            yield stmt, tests


def _decided_against(m, test: ast.AST, arm: int) -> bool:
    """The configuration makes ``test`` skip ``arm``: its value, from unchanged option and config-class defaults,
    is False for the body (``if cfg.enable_fsdp or cfg.enable_ddp:`` with both fields defaulting to False) or True
    for the ``else``."""
    value = switch_value(m, test)
    return value is not None and value == (arm == 1)


def _returned_to_a_sharder(m, site) -> bool:
    """The loader is returned by a function whose result some module of a framework-run project hands to the
    framework's sharder (``def build_loader(): return DataLoader(...)`` in ``data.py``, ``accelerator.prepare(model,
    build_loader())`` in ``train.py``)."""
    project, func = m.project, site.ctx.func
    if project is None or not project.frameworks or func is None or func.name not in project.sharded_results:
        return False
    for node in m.nodes_in(func.node):
        if isinstance(node, ast.Return) and node.value is not None:
            values = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else [node.value]
            if any(v is site.node or (site.assigned_to and dotted(v) == site.assigned_to) for v in values):
                return True
    return False


def _sharded_upstream(m, binding, depth: int = 8) -> bool:
    """The dataset bound here is split by rank or iterable-style, itself or anything it was derived from: the
    receiver or first argument of the call that made it, followed back through the function's earlier bindings
    (``ds = ds.shard(num_shards=world, index=rank)``; ``ds = ds.select(...)``; ``data = Wrapper(ds, ...)``): a
    wrapper or a selection keeps the rank's share."""
    if binding is None or depth == 0:
        return False
    if split_by_rank(m, binding.value):
        return True
    made = m.value_call(binding.value, binding.line + 1, binding.func)
    if made is None:
        return False
    if made.method in m.P.loader_sharders or _iterable_class(m, made.node) or _built_from_rank_share(m, made):
        return True
    func = made.node.func  # ``rows.select(...)``: the rows; ``Wrapper(rows, ...)``, ``datasets.Subset(rows, ...)``: rows
    receiver = dotted(func.value) if isinstance(func, ast.Attribute) else None
    earlier = m.binding(receiver, binding.line, binding.func) if receiver and receiver != "self" else None
    if earlier is None:
        first = dotted(made.arg(0))
        earlier = m.binding(first, binding.line, binding.func) if first else None
    return _sharded_upstream(m, earlier, depth - 1)


def _built_from_rank_share(m, made) -> bool:
    """The dataset is built from values this rank picked by its rank: ``Subset(full, indices)`` with ``indices =
    list(range(rank, n, world))`` / ``perm[rank::world]`` / ``np.array_split(idx, world)[rank]``, or rows read from
    ``files[rank::world]``, followed through the function's earlier assignments (not a device argument)."""
    given = [*made.node.args, *(k.value for k in made.node.keywords if k.arg is None or "device" not in k.arg)]
    roots = [root for arg in given for root in derivation(m, arg, made)]
    moved = [n for root in roots if _moved(root) for n in ast.walk(root)]  # and what a move reads (its device)
    return any(split_by_rank(m, root) and not m.guards.is_rank_expr(root) for root in roots
               if not any(root is n for n in moved))


def _moved(node: ast.AST) -> bool:
    """``data.to(rank, "x", "y")`` (PyG's attribute-wise move), ``t.cuda(rank)``: the same rows on this rank's GPU."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cuda")


def _iterable_class(m, call: ast.Call) -> bool:
    """The call builds an iterable-style dataset (``IterableDataset(...)``, a class named or based on one - here or in
    another module of the project - or a library dataset that shards by rank itself: ``rank_sharding_datasets``), which
    a sampler cannot index: it yields its own share of the data."""
    while isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call):
        call = call.func.value  # ``wds.WebDataset(urls).shuffle(1000).decode()``: the dataset the chain starts from
    name = last(dotted(call.func) or "")
    if "Iterable" in name or m.qual(call.func) in m.P.rank_sharding_datasets:
        return True
    cls = m.classes.get(name)
    if cls is None:  # a class of another module of the project (``from data import StreamDataset``)
        return m.project is not None and name in m.project.iterable_classes
    return any("Iterable" in ast.unparse(b) or m.qual(b) in m.P.rank_sharding_datasets for b in cls.bases)


def _batches_itself(m, site) -> bool:
    """``DataLoader(data, batch_size=None)`` on torch's signature: automatic batching is off, so the dataset yields
    ready batches; such pipelines (webdataset, wenet, torchdata, lhotse) split the data by rank inside the
    dataset, which the scan cannot see. Not a loader given an explicit sampler (a sampler still decides)."""
    given = site.kw("batch_size")
    if given is None and len(site.node.args) > 1 and site.name in m.P.torch_signature_loaders:
        given = site.node.args[1]
    return isinstance(given, ast.Constant) and given.value is None



def _under_iterable_test(m, dataset: str, site) -> bool:
    """The loader is built only where ``isinstance(<dataset>, <an iterable-style class>)`` holds."""
    holder = site.ctx.func.node if site.ctx.func is not None else m.tree
    for node in m.nodes_in(holder):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Call) and dotted(node.test.func) == "isinstance" \
                and len(node.test.args) == 2 and dotted(node.test.args[0]) == dataset \
                and "Iterable" in ast.unparse(node.test.args[1]) and any(site in m.sites_in(s) for s in node.body):
            return True
    return False

CHECKER = MissingDistributedSamplerChecker()


def _always_none(m, sampler, site) -> bool:
    """``sampler=train_sampler`` / ``sampler=self.train_sampler`` whose every binding (in the loader's function, or for
    an attribute in any method of its class) is ``None``: the loader gets no sampler."""
    name = dotted(sampler)
    func = site.ctx.func
    if not name:
        return False
    if name.startswith("self.") and func is not None and func.cls is not None:
        bindings = [b for b in m.bindings.get(name, ()) if b.func is not None and b.func.cls == func.cls]
    else:
        bindings = [b for b in m.bindings.get(name, ()) if b.func is func]
    return bool(bindings) and all(isinstance(b.value, ast.Constant) and b.value.value is None for b in bindings)


def _rank_sliced_seeds(m, site) -> bool:
    """A seed argument of the loader (``loader_seed_arguments``: NeighborLoader's ``input_nodes``) computed from the
    rank, in the call or in the value the same function last bound to the name passed."""
    for keyword in site.node.keywords:
        if keyword.arg not in m.P.loader_seed_arguments:
            continue
        value = keyword.value
        if isinstance(value, (ast.Name, ast.Attribute)):
            binding = m.binding(dotted(value), site.line, site.ctx.func)
            value = binding.value if binding is not None else value
        if m.mentions_rank(value):
            return True
    return False
