"""checkpoint-without-module: ``state_dict()`` of the DDP wrapper saved (keys get a ``module.`` prefix)."""

from __future__ import annotations

import ast
from dataclasses import replace

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import (
    contains, ddp_wraps, function_arguments, local_callee, value_returns, wrapped_models,
)
from troubleshooter.scan.model import const, dotted, walk


class CheckpointWithoutModuleChecker(Checker):
    """``torch.save(ddp_model.state_dict(), ...)`` after ``ddp_model = DDP(...)``, also across the methods of a
    class and into a local save function; not when the script loads its checkpoints back into the wrapper."""

    id = "checkpoint-without-module"

    def check(self, m):
        if "consume_prefix_in_state_dict_if_present" in m.text or any("module." in s for s in m.strings):
            return  # the loading side strips the prefix
        if any(_own_loader(m, site) for site in m.calls):
            return  # weights go in through the model's own loading method, which may rename the keys
        for wrap in [*ddp_wraps(m), *_helper_wraps(m)]:
            name = wrap.assigned_to
            if not name or wrap.ctx.sides or self._restored_into_wrapper(m, wrap, name):
                continue  # wrapped on some ranks only, or checkpoints go back into the wrapper
            for site in self._state_dicts_of(m, wrap, name):
                if self._in_conditional_expr(m, site) or not self._saved(m, site):
                    continue  # the code picks wrapper vs .module itself, or the state dict is not saved
                yield Hit(site.line, f"{site.recv}.state_dict() is the DDP wrapper's: every key starts with 'module.', "
                                     f"so loading it into a plain model fails; save {site.recv}.module.state_dict()",
                          {"model": site.recv})
            for save in self._wrapper_pickled(m, wrap, name):
                yield Hit(save.line, f"torch.save({name}) pickles the DDP wrapper itself: loading it needs the wrapper "
                                     f"and a process group, and its state keys start with 'module.'; save "
                                     f"{name}.module.state_dict()", {"model": name})
        yield from self._plain_loads_into_wrapper(m)
        yield from self._prepared(m)
        yield from self._containers(m)
        yield from self._named_attributes(m)
        yield from self._nested_holders(m)
        for container, key, wrap in _keyed_wraps(m):
            if wrap.ctx.sides:
                continue
            for site in _keyed_state_dicts(m, container, key, wrap):
                if not self._in_conditional_expr(m, site) and self._saved(m, site):
                    yield Hit(site.line, f"{container}[{key!r}] is a DDP wrapper: its state_dict() keys all start with "
                                         f"'module.', so the checkpoint does not load into a plain model; save "
                                         f"{container}[{key!r}].module.state_dict()", {"model": f"{container}[{key!r}]"})
                    break

    def _nested_holders(self, m):
        """The wrapper kept two objects deep: ``engine = Engine(model)`` keeps it as ``self.model``, ``Trainer(engine)``
        keeps the engine as ``self.engine``, and a hook reads ``trainer.engine.model``: that chain's state_dict()
        (directly, or in a local function it is handed to) is the wrapper's. Both attribute names must come from
        those constructions."""
        chains = set()
        for wrap in [*ddp_wraps(m), *_helper_wraps(m)]:
            name, func = wrap.assigned_to, wrap.ctx.func
            if not name or "." in name:
                continue
            for inner in m.calls:
                if inner.recv is not None or inner.method not in m.classes or inner.ctx.func is not func \
                        or not inner.assigned_to or "." in inner.assigned_to:
                    continue
                held = _attributes_given(m, inner, name)
                for outer in m.calls:
                    if outer.recv is None and outer.method in m.classes and outer.ctx.func is func:
                        for attr in _attributes_given(m, outer, inner.assigned_to):
                            chains |= {f"{attr[5:]}.{h[5:]}" for h in held}
        if not chains:
            return
        ends = tuple(f".{c}" for c in chains)
        for site in m.calls:
            if site.method == "state_dict" and site.recv and site.recv.endswith(ends):
                if self._saved(m, site):
                    yield Hit(site.line, f"{site.recv}.state_dict() is the DDP wrapper's: every key starts with "
                                         f"'module.'; save {site.recv}.module.state_dict()", {"model": site.recv})
                continue
            callee, bound = function_arguments(m, site)
            for arg, param in bound:
                if (dotted(arg) or "").endswith(ends):
                    for inner in m.calls:
                        if inner.ctx.func is callee and inner.method == "state_dict" and inner.recv == param \
                                and self._saved(m, inner):
                            yield Hit(inner.line, f"{inner.recv}.state_dict() receives {dotted(arg)}, a DDP wrapper: "
                                                  "every key starts with 'module.'; save its .module.state_dict()",
                                      {"model": dotted(arg)})

    def _named_attributes(self, m):
        """``getattr(self, name).state_dict()`` saved for each ``name`` of a literal list of attribute names (the
        loop ``for name in ("model", "optimizer")``, or a class attribute holding the tuple), when one of those
        attributes holds a DDP wrapper: stored by ``__init__`` from a parameter a construction site of the file hands
        the wrapper to, or assigned a wrap in the class."""
        wrapper_attrs: dict[str, set[str]] = {}  # class -> self.<attr> holding a wrapper
        for wrap in [*ddp_wraps(m), *_helper_wraps(m)]:
            name, func = wrap.assigned_to, wrap.ctx.func
            if name and name.startswith("self.") and func is not None and func.cls:
                wrapper_attrs.setdefault(func.cls, set()).add(name)
            elif name:
                for call in m.calls:
                    if call.recv is None and call.method in m.classes and call.ctx.func is func:
                        wrapper_attrs.setdefault(call.method, set()).update(_attributes_given(m, call, name))
        if not wrapper_attrs:
            return
        for site in m.calls:
            if site.method != "state_dict":
                continue
            inner = site.node.func.value if isinstance(site.node.func, ast.Attribute) else None
            func = site.ctx.func
            if not (isinstance(inner, ast.Call) and dotted(inner.func) == "getattr" and len(inner.args) >= 2
                    and dotted(inner.args[0]) == "self" and func is not None and func.cls in wrapper_attrs):
                continue
            names = _literal_names(m, func, inner.args[1])
            held = {f"self.{n}" for n in names} & wrapper_attrs[func.cls]
            if held and not site.ctx.sides and self._saved(m, site):
                yield Hit(site.line, f"getattr(self, {ast.unparse(inner.args[1])}).state_dict() saves "
                                     f"{sorted(held)[0]}, a DDP wrapper: its keys all start with 'module.', so the "
                                     "checkpoint does not load into the plain model; save the wrapped .module",
                          {"model": sorted(held)[0]})

    def _containers(self, m):
        """``torch.save(pipeline.state_dict())`` where ``pipeline`` is an object of a class of this file that keeps
        the DDP wrapper as an attribute (``self._model = DDP(...)``): its keys read ``_model.module.``, so a
        checkpoint saved under DDP does not load into the same class built without it. Not when the class defines
        its own ``state_dict``."""
        holders = {}
        for wrap in ddp_wraps(m):
            func, name = wrap.ctx.func, wrap.assigned_to or ""
            if func is None or func.cls is None or not name.startswith("self.") or name.count(".") != 1:
                continue
            if any(f.cls == func.cls for f in m.functions.get("state_dict", ())):
                continue
            holders.setdefault(func.cls, name[5:])
        if not holders:
            return
        for site in m.methods("state_dict"):
            made = m.value_call(ast.Name(id=site.recv), site.line, site.ctx.func) if "." not in site.recv else None
            if made is None and site.recv.startswith("self."):
                made = next((m.site_of(b.value) for b in m.bindings.get(site.recv, ())
                             if isinstance(b.value, ast.Call) and b.func and site.ctx.func
                             and b.func.cls == site.ctx.func.cls), None)
            cls = made.method if made is not None and made.recv is None else None
            if cls not in holders or site.ctx.sides or not self._saved(m, site):
                continue
            yield Hit(site.line, f"{site.recv}.state_dict() holds the DDP wrapper {cls}.{holders[cls]}: its keys read "
                                 f"'{holders[cls]}.module.', so the checkpoint does not load without DDP; save the "
                                 f"unwrapped module's state (or strip 'module.' on load)", {"model": site.recv})

    def _prepared(self, m):
        """``torch.save(model.state_dict())`` of a model a framework's preparer returned (Accelerate's ``prepare``,
        Ray Train's ``prepare_model``): on several GPUs that is the DDP wrapper too."""
        for name, prep in wrapped_models(m).items():
            if prep.method not in m.P.ddp_returning_preparers or prep.recv is None or prep.ctx.sides \
                    or prep.name in m.P.ddp_wrappers:
                continue
            if any(s.recv == name and s.method == "load_state_dict" and s.line > prep.line for s in m.calls):
                continue  # checkpoints go back into the prepared model
            for site in m.methods("state_dict", name):
                if site.ctx.func is not prep.ctx.func or site.line <= prep.line or any(
                        prep.line < b.line < site.line for b in m.bindings.get(name, ()) if b.func is site.ctx.func):
                    continue
                if self._in_conditional_expr(m, site) or not self._saved(m, site):
                    continue
                unwrapped = f"{prep.recv}.unwrap_model({name})" if prep.method == "prepare" else f"{name}.module"
                yield Hit(site.line, f"{name}.state_dict() is the prepared model's: on several GPUs it is the DDP "
                                     f"wrapper, every key starts with 'module.'; save {unwrapped}.state_dict()",
                          {"model": name})
                return

    def _plain_loads_into_wrapper(self, m):
        """``ddp_model.load_state_dict(state)`` on the wrapper (after the wrap in its function, or ``self.model``
        bound to the wrap in ``__init__`` and loaded in another method) when nothing the script saves comes from the
        wrapper's own ``state_dict()``: a plain checkpoint (``ddp_model.module.state_dict()`` saved, pretrained
        weights) has no ``module.`` prefix, so the load fails with "Missing key(s) in state_dict: module.…".
        Quiet with ``strict=False``, for an in-memory copy (``.load_state_dict(other.state_dict())``), and when the
        script round-trips the wrapper's own state dict."""
        for wrap in [*ddp_wraps(m), *_helper_wraps(m)]:
            name = wrap.assigned_to
            if not name or wrap.ctx.sides or any(self._saved(m, s) for s in self._state_dicts_of(m, wrap, name)):
                continue
            for site in _wrapper_method_calls(m, wrap, name, "load_state_dict"):
                strict = site.arg(1, "strict")
                given = site.arg(0, "state_dict")
                if (strict is not None and const(strict, default=...) is not True) or given is None or (
                        isinstance(given, ast.Call) and isinstance(given.func, ast.Attribute)
                        and given.func.attr == "state_dict"):
                    continue
                yield Hit(site.line, f"{name}.load_state_dict(...) loads into the DDP wrapper, whose keys all start "
                                     f"with 'module.': a plain checkpoint (saved from .module, or pretrained weights) "
                                     f"fails with 'Missing key(s) in state_dict'; load into {name}.module",
                          {"model": name})
                break

    @staticmethod
    def _state_dicts_of(m, wrap, name: str):
        """``state_dict()`` calls on the wrapper: after the wrap in its function, in another method of the same
        class (``self.model = DDP(...)``), or in a local function the wrapper is passed to."""
        func = wrap.ctx.func
        cls = func.cls if func else None
        class_wide = name.startswith("self.") and cls is not None and all(
            b.value is wrap.node or (b.func and b.func.name == "__init__") for b in m.bindings.get(name, ())
            if b.func and b.func.cls == cls)
        for site in m.methods("state_dict"):
            if site.recv != name:
                continue
            if site.ctx.func is func and site.line > wrap.line:
                if _still_bound(m, wrap, name, site.line):
                    yield site
            elif class_wide and site.ctx.func is not None and site.ctx.func.cls == cls and site.ctx.func is not func:
                yield site  # (in the wrap's own method, a state_dict() before the wrap is the bare model's)
        for call in m.calls:
            here = call.ctx.func is func and call.line > wrap.line
            # ``self.model`` bound to the wrap in ``__init__`` only: any method of the class hands the wrapper over
            elsewhere = class_wide and call.ctx.func is not None and call.ctx.func.cls == cls and call.ctx.func is not func
            if not (here or elsewhere):
                continue
            if here and not _still_bound(m, wrap, name, call.line):
                continue
            if call.recv is None and call.method in m.classes:  # Trainer(model, ...) keeps it as self.<attr>
                if here:
                    yield from _kept_by_class(m, call, name)
                continue
            callee = local_callee(m, call) or _called_object_method(m, call)
            if callee is None or (callee.cls is not None and callee.name != "__call__"):
                continue
            params = [a.arg for a in callee.node.args.args]
            if params and params[0] == "self" and callee.cls is not None:
                params = params[1:]
            handed = [params[i] for i, arg in enumerate(call.node.args) if i < len(params) and _hands_over(arg, name)]
            handed += [k.arg for k in call.node.keywords if k.arg in params and _hands_over(k.value, name)]
            for param in handed:  # ``save_checkpoint(self.model, path)`` / ``save_checkpoint(path, model=model)``
                yield from (s for s in m.methods("state_dict") if s.ctx.func is callee
                            and (s.recv == param or _drawn_from(callee, s.recv, param)))

    @staticmethod
    def _wrapper_pickled(m, wrap, name: str):
        """``torch.save(model, path)`` of the wrapper object itself, on rank 0 (the run's checkpoint; one written by
        every rank is logging-from-all-ranks' line already), after the wrap in its function (or, for an attribute
        bound only in ``__init__``, in any method of the class)."""
        func = wrap.ctx.func
        cls = func.cls if func else None
        for save in m.calls_to(m.P.checkpoint_writers):
            if not save.node.args or dotted(save.node.args[0]) != name or not save.rank0:
                continue
            if save.ctx.func is func and save.line > wrap.line:
                if _still_bound(m, wrap, name, save.line):
                    yield save
            elif name.startswith("self.") and cls is not None and save.ctx.func is not None \
                    and save.ctx.func.cls == cls and all(b.func is func for b in m.bindings.get(name, ())
                                                         if b.func and b.func.cls == cls):
                yield save

    @staticmethod
    def _restored_into_wrapper(m, wrap, wrapper: str) -> bool:
        """The script loads its checkpoints back into the wrapper itself (``module.`` keys on both sides); a load
        into the same name while it still holds the bare model (before the wrap, or a fresh model in another
        function) does not count: that is the load the prefixed keys break. Nor does a resume into the wrapper when
        another function builds a fresh model of a class of this file and loads a checkpoint into it (an
        inference / test entry): that load gets the prefixed keys."""
        if _fresh_model_loads(m, wrap):
            return False
        for site in _loads(m):
            values = [*site.node.args, *(k.value for k in site.node.keywords)]
            if not ((site.recv == wrapper and site.method == "load_state_dict") or (
                    m.P.matches("checkpoint_restore_calls", site.method) and any(dotted(v) == wrapper for v in values))):
                continue
            if not _holds_bare_model(m, wrap, wrapper, site):
                return True
        return False

    @staticmethod
    def _in_conditional_expr(m, site) -> bool:
        return any(contains(node, site.node) for node in m.nodes_of(ast.IfExp))

    @staticmethod
    def _saved(m, site) -> bool:
        """The state dict ends up in torch.save(...) (directly, via a variable / dict, or a local save helper)."""
        for save in _saves(m).get(id(site.ctx.func), ()):
            if save.line < site.line:
                continue
            roots = [save.node]
            for arg in save.node.args:
                name = dotted(arg)
                binding = m.binding(name, save.line, save.ctx.func) if name else None
                if binding is not None:
                    roots.append(binding.value)
            if any(contains(root, site.node) for root in roots):
                return True
        return False


def _own_loader(m, site) -> bool:
    """``model.load_weight(torch.load(path))``: a method of the model's own (not ``load_state_dict``) takes a loaded
    checkpoint."""
    return site.recv is not None and "load" in site.method and site.method != "load_state_dict" and any(
        isinstance(a, ast.Call) and m.qual(a.func) == "torch.load" for a in site.node.args)


def _helper_wraps(m):
    """``model = build_model(...)`` where ``build_model`` is a function of this file whose every ``return`` hands
    back a DDP wrap (the call itself, or a name bound to it): that call site binds the wrapper. A method counts
    the same way through an object of a class of this file (``model = accelerator.prepare(model)`` of a
    hand-written accelerator class). A set-up helper whose every ``return`` is a tuple holding the wrap at one
    position (``return loader, model, optimizer``) binds the name unpacked at that position
    (``loader, model, optimizer = setup(...)``): the site comes back with that name as ``assigned_to``."""
    wraps = {id(w.node) for w in ddp_wraps(m)}
    if not wraps:
        return []
    makers, tuple_makers = set(), {}
    for infos in m.functions.values():
        for info in infos:
            returns = [n.value for n in value_returns(m, info)]
            if returns and all(_is_wrap(m, value, info, wraps) for value in returns):
                makers.add(id(info))
            elif returns and all(isinstance(v, ast.Tuple) for v in returns):
                at = {frozenset(i for i, e in enumerate(v.elts) if _is_wrap(m, e, info, wraps)) for v in returns}
                if len(at) == 1 and len(next(iter(at))) == 1 and len({len(v.elts) for v in returns}) == 1:
                    tuple_makers[id(info)] = next(iter(next(iter(at))))
    found = []
    for call in m.calls:
        callee = id(local_callee(m, call))
        if call.assigned_to and callee in makers:
            found.append(call)
        elif callee in tuple_makers and len(call.unpacked_to) > tuple_makers[callee]:
            name = call.unpacked_to[tuple_makers[callee]]
            if name:
                found.append(replace(call, assigned_to=name))
    return found


def _still_bound(m, wrap, name: str, line: int) -> bool:
    """At ``line`` of the wrap's function, ``name`` still holds what the wrap (or the helper call that unpacked
    it) bound: no later ``name = ...`` in between."""
    rebound = m.binding(name, line, wrap.ctx.func)
    if name in wrap.unpacked_to:  # ``a, model = setup(...)``: the index binds no name for a tuple target
        return rebound is None or rebound.func is not wrap.ctx.func or rebound.line < wrap.line
    return rebound is not None and rebound.value is wrap.node


def _is_wrap(m, value: ast.AST, func, wraps: set[int]) -> bool:
    if isinstance(value, ast.Call):
        return id(value) in wraps
    name = dotted(value)
    if not name:
        return False
    bound = [b for b in m.bindings.get(name, ()) if b.func is func]
    return bool(bound) and id(max(bound, key=lambda b: b.line).value) in wraps


def _kept_by_class(m, call, name: str):
    """``state_dict()`` calls on the attribute a local class's ``__init__`` stores the wrapper in
    (``Trainer(model)`` with ``self.model = model``), in the methods of that class."""
    attrs = _attributes_given(m, call, name)
    for site in m.methods("state_dict"):
        if site.recv in attrs and site.ctx.func is not None and site.ctx.func.cls == call.method:
            yield site


def _attributes_given(m, call, name: str) -> set[str]:
    """The ``self.<attr>`` names a local class's ``__init__`` stores ``name`` in when ``call`` builds it."""
    init = next((f for f in m.functions.get("__init__", ()) if f.cls == call.method), None)
    if init is None:
        return set()
    params = [a.arg for a in init.node.args.args][1:]
    given = {params[i] for i, arg in enumerate(call.node.args) if i < len(params) and _hands_over(arg, name)}
    given |= {k.arg for k in call.node.keywords if k.arg and _hands_over(k.value, name)}
    kept = {target for target, bindings in m.bindings.items() if target.startswith("self.") and any(
        b.func is init and dotted(b.value) in given for b in bindings)}
    for stmt in walk(init.node):  # ``self.model, self.optimizer = model, optimizer``
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Tuple):
            for target in stmt.targets:
                if isinstance(target, ast.Tuple) and len(target.elts) == len(stmt.value.elts):
                    kept |= {dotted(t) for t, v in zip(target.elts, stmt.value.elts)
                             if dotted(v) in given and (dotted(t) or "").startswith("self.")}
    return kept


def _literal_names(m, func, node) -> set[str]:
    """The strings a loop variable ranges over (``for attr in ("model", "opt")`` or over ``self.saved_attributes``,
    a tuple literal in the class body)."""
    name = dotted(node)
    for loop in walk(func.node):
        if not (isinstance(loop, (ast.For, ast.comprehension)) and isinstance(loop.target, ast.Name)
                and loop.target.id == name):
            continue
        source = loop.iter
        if dotted(source) and dotted(source).startswith("self."):
            cls = m.classes.get(func.cls)
            attr = dotted(source)[5:]
            source = next((stmt.value for stmt in (cls.body if cls else []) if isinstance(stmt, ast.Assign)
                           and any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets)), None)
        if isinstance(source, (ast.Tuple, ast.List, ast.Set)):
            return {e.value for e in source.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _keyed_wraps(m):
    """``models["generator"] = DDP(models["generator"], ...)``: (container, key, wrap call) for wrappers kept in a
    dict under a literal key (GAN / TTS trainers keep their networks this way)."""
    wraps = {id(w.node): w for w in ddp_wraps(m)}
    keyed = [node for node in m.assigns if id(node.value) in wraps and _keyed(node)] if wraps else []
    if len(keyed) > 1:  # in the order a walk of the module meets them, as the hits are given
        keyed = [node for node in m.nodes_in(m.tree) if id(node) in {id(k) for k in keyed}]
    for node in keyed:
        yield dotted(node.targets[0].value), const(node.targets[0].slice), wraps[id(node.value)]


def _keyed(node: ast.AST) -> bool:
    """``<container>["key"] = ...``: one subscript target with a literal string key."""
    return isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
        and dotted(node.targets[0].value) is not None and isinstance(const(node.targets[0].slice, default=None), str)


def _keyed_state_dicts(m, container: str, key: str, wrap):
    """``<container>[key].state_dict()`` after the wrap in its function, or ``self.<attr>[key].state_dict()`` in a
    local class the container was handed to."""
    places = {(container, wrap.ctx.func)}
    for call in m.calls:
        if call.ctx.func is wrap.ctx.func and call.line > wrap.line and call.recv is None and call.method in m.classes:
            places |= {(attr, call.method) for attr in _attributes_given(m, call, container)}
    found, restored = [], False
    for site in m.calls:
        value = site.node.func.value if site.method in ("state_dict", "load_state_dict") \
            and isinstance(site.node.func, ast.Attribute) else None
        if not isinstance(value, ast.Subscript) or const(value.slice, default=None) != key:
            continue
        owner = dotted(value.value)
        for name, where in places:
            if owner == name and (where is site.ctx.func and site.line > wrap.line or (
                    isinstance(where, str) and site.ctx.func is not None and site.ctx.func.cls == where)):
                restored |= site.method == "load_state_dict"  # checkpoints go back into the wrapper
                found.append(site)
    if not restored:
        yield from (site for site in found if site.method == "state_dict")


def _saves(m) -> dict[int, list]:
    """id(function) -> the calls in it that write a checkpoint (``checkpoint_writers``, ``checkpoint_payload_calls``)
    or call a local function that does; sorted out once per module (asked per state_dict() call)."""
    found = m.memo.get("checkpoint-without-module.saves")
    if found is None:
        writers = m.calls_to(m.P.checkpoint_writers) + [
            c for c in m.calls if c.name and m.P.matches("checkpoint_payload_calls", c.name)]
        writing = {id(w.ctx.func) for w in writers}
        helpers = [c for c in m.calls if (f := local_callee(m, c)) is not None and id(f) in writing]
        found = m.memo["checkpoint-without-module.saves"] = {}
        for save in writers + helpers:
            found.setdefault(id(save.ctx.func), []).append(save)
    return found


def _loads(m) -> list:
    """The calls that may load a checkpoint into a model: ``x.load_state_dict(...)`` and the
    ``checkpoint_restore_calls`` (found once per module, asked per wrap)."""
    found = m.memo.get("checkpoint-without-module.loads")
    if found is None:
        found = m.memo["checkpoint-without-module.loads"] = [
            site for site in m.calls if site.method == "load_state_dict"
            or m.P.matches("checkpoint_restore_calls", site.method)]
    return found


def _fresh_model_loads(m, wrap) -> bool:
    """``net = Net(); net.load_state_dict(torch.load(path))`` in a function other than the wrap's (not a method of
    the wrap's class): a model built without DDP that reads a checkpoint from disk."""
    readers = m.memo.get("checkpoint-without-module.readers")
    if readers is None:
        readers = m.memo["checkpoint-without-module.readers"] = {
            id(c.node) for c in m.calls if c.name in ("torch.load", "torch.serialization.load")}
    for site in m.methods("load_state_dict"):
        func = site.ctx.func
        if func is None or func is wrap.ctx.func or (wrap.ctx.func and func.cls and func.cls == wrap.ctx.func.cls):
            continue
        binding = m.binding(site.recv, site.line, func)
        made = m.site_of(binding.value) if binding is not None and binding.func is func \
            and isinstance(binding.value, ast.Call) else None
        if made is None or made.recv is not None or made.method not in m.classes:
            continue
        given = [*site.node.args, *(k.value for k in site.node.keywords)]
        bound = [m.binding(dotted(g), site.line, func) for g in given if dotted(g)]
        if any(id(n) in readers for root in [*given, *(b.value for b in bound if b is not None)] for n in walk(root)):
            return True
    return False


def _hands_over(arg: ast.AST, name: str) -> bool:
    """``arg`` is the wrapper itself, or a dict / list / tuple literal holding it (``{"model": model, ...}``)."""
    if dotted(arg) == name:
        return True
    items = arg.values if isinstance(arg, ast.Dict) else arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else []
    return any(dotted(item) == name for item in items)


def _drawn_from(callee, recv: str | None, param: str) -> bool:
    """``recv`` is a loop or comprehension variable over ``param`` (``for name, obj in to_save.items()``)."""
    if not recv:
        return False
    for node in walk(callee.node):
        if isinstance(node, (ast.comprehension, ast.For)) and any(
                dotted(n) == param for n in walk(node.iter)) and any(
                isinstance(t, ast.Name) and t.id == recv for t in walk(node.target)):
            return True
    return False


def _called_object_method(m, call):
    """``checkpointer(...)`` where ``checkpointer = Handler(...)`` is an object of a class of this file: its
    ``__call__``."""
    if call.recv is not None or not isinstance(call.node.func, ast.Name):
        return None
    binding = m.binding(call.node.func.id, call.line, call.ctx.func)
    made = m.site_of(binding.value) if binding is not None and isinstance(binding.value, ast.Call) else None
    if made is None or made.method not in m.classes:
        return None
    return next((f for f in m.functions.get("__call__", ()) if f.cls == made.method), None)


def _wrapper_method_calls(m, wrap, name: str, method: str):
    """Calls ``name.<method>()`` known to reach the wrapper: after the wrap in its function (the name still bound
    to it), or in another method of the class when ``self.<attr>`` is bound in ``__init__`` only and that method
    is not run by the wrapping function before the wrap."""
    func = wrap.ctx.func
    cls = func.cls if func else None
    class_wide = name.startswith("self.") and cls is not None and all(
        b.value is wrap.node or (b.func and b.func.name == "__init__") for b in m.bindings.get(name, ())
        if b.func and b.func.cls == cls)
    for site in m.methods(method):
        if site.recv != name:
            continue
        if site.ctx.func is func and site.line > wrap.line:
            if _still_bound(m, wrap, name, site.line):
                yield site
        elif class_wide and site.ctx.func is not None and site.ctx.func.cls == cls and site.ctx.func is not func \
                and not any(c.recv == "self" and c.method == site.ctx.func.name and c.ctx.func is func
                            and c.line < wrap.line for c in m.calls):
            yield site  # (not a method the wrapping function calls before the wrap: it sees the bare model)


def _holds_bare_model(m, wrap, name: str, site) -> bool:
    """At ``site``, ``name`` is known to hold a model that is not the DDP wrapper: in the wrap's own function
    before the wrap, or bound in the site's function to something that is not a DDP wrap."""
    if site.ctx.func is wrap.ctx.func:
        return site.line < wrap.line
    binding = m.binding(name, site.line, site.ctx.func)
    if binding is None or binding.func is not site.ctx.func:
        return False  # a parameter or an attribute: it may be the wrapper
    made = m.site_of(binding.value) if isinstance(binding.value, ast.Call) else None
    return made is not None and made.name not in m.P.ddp_wrappers


CHECKER = CheckpointWithoutModuleChecker()
