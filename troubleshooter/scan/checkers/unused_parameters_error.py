"""unused-parameters-error: a DDP model whose forward skips parameters, without find_unused_parameters."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import callers_of, ddp_wraps, local_callee, wrapped_name
from troubleshooter.scan.checkers._modules import (
    ALWAYS, INPUT, RANDOM, ModelClass, analyse, flag_off, prepared_classes, wrapped_classes)
from troubleshooter.scan.guards import parent_map
from troubleshooter.scan.model import CallSite, ModuleIndex, const, dotted


class UnusedParametersErrorChecker(Checker):
    """A parameter-owning submodule never used by forward, or used only on some inputs."""

    id = "unused-parameters-error"

    def check(self, m):
        frozen: set[str] = set()
        models = [*wrapped_classes(m), *prepared_classes(m)]
        if "requires_grad" in m.text:
            yield from _frozen_after_wrap(m)
            found = _frozen_parts(m) if models else None
            if found is None:
                return  # a freeze whose target we cannot tell: frozen layers are legitimately unused
            frozen = found
        for wrap, cls in models:
            flag = wrap.kw("find_unused_parameters")
            model = wrapped_name(wrap) or "model"
            if flag is not None and const(flag, default=True) is not False:
                continue
            static = wrap.kw("static_graph")
            if static is not None and const(static, default=True) is not False:
                continue  # static_graph=True records the unused parameters in the first iteration
            if wrap.method in m.P.model_preparers and any(
                    const(site.kw("find_unused_parameters"), default=True) is not False
                    for site in m.calls_named(m.P.ddp_settings)):
                continue  # ``Accelerator(kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)])``
            if cls.dynamic:
                continue
            yield from self._unused_in_submodules(m, wrap, cls, model, frozen)
            yield from _discarded_outputs(m, wrap, cls, model, frozen)
            for attr, line in sorted(cls.params.items(), key=lambda kv: kv[1]):
                if attr in cls.conditional_init or attr in frozen:
                    continue
                use = cls.uses.get(attr)
                if use is None:
                    why = f"self.{attr} (line {line}) is never used by {cls.name}.forward"
                elif use == INPUT:
                    why = f"self.{attr} is used only under an input-dependent branch (line {cls.use_lines[attr]})"
                elif use == RANDOM:
                    why = f"self.{attr} is used only when a random draw says so (line {cls.use_lines[attr]})"
                elif attr in cls.flag_uses and flag_off(m, wrap, cls, cls.flag_uses[attr]):
                    why = (f"self.{attr} is used only when self.{cls.flag_uses[attr]} is set (line "
                           f"{cls.use_lines[attr]}), which this model is built without")
                else:
                    continue
                yield Hit(wrap.line, f"{why}, so its parameters get no gradient and DDP({model}) without "
                                     "find_unused_parameters=True fails with 'Expected to have finished reduction in "
                                     "the prior iteration'", {"model": model, "variable": f"self.{attr}"})

    @staticmethod
    def _unused_in_submodules(m, wrap, cls: ModelClass, model: str, frozen: set[str]):
        """A parameter-owning layer that a submodule (an instance of another class of this file, always called by
        the model) builds and its own forward never uses: its parameters get no gradient either."""
        seen, todo = {cls.name}, [(cls, f"self.{attr}") for attr in _always_used(cls)]
        while todo:
            owner, path = todo.pop()
            sub_name = _local_class_of(m, owner, path.rpartition(".")[2])
            if sub_name is None or sub_name in seen:
                continue
            seen.add(sub_name)
            sub = analyse(m, m.classes[sub_name])
            if sub.dynamic:
                continue
            for attr, line in sorted(sub.params.items(), key=lambda kv: kv[1]):
                if attr in sub.conditional_init or attr in frozen:
                    continue
                skipped = _skipped_sometimes(m, sub, attr)
                if attr not in sub.uses or skipped:
                    how = skipped or "is never used by"
                    yield Hit(wrap.line, f"{path}.{attr} ({sub_name}, line {line}) {how} {sub_name}.forward, "
                                         f"so its parameters get no gradient and DDP({model}) without "
                                         "find_unused_parameters=True fails with 'Expected to have finished reduction in "
                                         "the prior iteration'", {"model": model, "variable": f"{path}.{attr}"})
                    return
            todo += [(sub, f"{path}.{attr}") for attr in _always_used(sub)]


def _always_used(cls: ModelClass) -> list[str]:
    return [attr for attr in cls.params if cls.uses.get(attr) == ALWAYS and attr not in cls.conditional_init]


def _skipped_sometimes(m: ModuleIndex, sub: ModelClass, attr: str) -> str | None:
    """How a submodule's forward uses ``self.<attr>`` only on some calls: under a random draw (stochastic depth,
    layer drop), or under a test on an optional argument (``residual=None``) that some callers leave out."""
    use, line = sub.uses.get(attr), sub.use_lines.get(attr)
    if use == RANDOM:
        return f"is used only when a random draw says so (line {line}) in"
    if use != INPUT:
        return None
    forward = next((f for f in sub.node.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
    if forward is None:
        return None
    args = forward.args
    positional = args.args[len(args.args) - len(args.defaults):]
    optional = {a.arg for a, d in zip([*positional, *args.kwonlyargs], [*args.defaults, *args.kw_defaults])
                if d is not None and const(d, default=...) is None}
    for node in ast.walk(forward):
        if isinstance(node, ast.If) and node.body[0].lineno <= line <= node.body[-1].end_lineno:
            tested = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)} & optional
            if tested:
                return f"is used only when the optional argument `{sorted(tested)[0]}` is passed (line {line}) to"
    picked = _picked_by(m, sub, forward, attr)
    if picked:
        return f"has one entry picked per call by {picked} (line {line}) in"
    return None


def _picked_by(m: ModuleIndex, sub: ModelClass, forward: ast.FunctionDef, attr: str) -> str | None:
    """``self.<attr>[i](x)`` where ``i`` is an argument of forward (a task id) or a random draw bound in forward
    (``choice = random.randrange(len(self.candidates))``): the other entries get no gradient on that call. Not a loop
    index, which visits every entry."""
    params = {a.arg for a in [*forward.args.args, *forward.args.kwonlyargs]} - {"self"}
    loop_vars = {n.id for loop in ast.walk(forward) if isinstance(loop, (ast.For, ast.comprehension))
                 for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    drawn = {t.id for node in ast.walk(forward) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
             and (dotted(node.value.func) or "").startswith(tuple(m.P.random_draw_prefixes))
             for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(forward):
        if isinstance(node, ast.Subscript) and dotted(node.value) == f"self.{attr}" and isinstance(node.slice, ast.Name):
            index = node.slice.id
            if index in loop_vars:
                return None
            if index in drawn:
                return f"a random draw (`{index}`)"
            if index in params:
                return f"the argument `{index}`"
    return None


def _local_class_of(m, owner: ModelClass, attr: str) -> str | None:
    """The class of this file that ``self.<attr> = ...`` in ``owner.__init__`` instantiates, alone or as the one
    kind of item of a container (``nn.ModuleList(Block(d) for _ in range(n))``, ``nn.Sequential(*[Block(d) ...])``)."""
    for node in ast.walk(owner.node):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and dotted(node.targets[0]) == f"self.{attr}":
            made = {n.func.id for n in ast.walk(node.value) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id in m.classes}
            if len(made) == 1:
                return made.pop()
    return None


CHECKER = UnusedParametersErrorChecker()


def _discarded_outputs(m, wrap, cls: ModelClass, model: str, frozen: set[str]):
    """forward returns several outputs (a tuple or list, or a dict with literal keys) and no call of the wrapper lets
    one of them reach the loss it calls backward on: thrown away (``logits, _ = model(x)``), kept apart (``loss, logits
    = model(x)``; ``loss.backward()``; logits only printed as an accuracy) or never read (``out = model(x)``; the loss
    reads only ``out["logits"]``): a parameter-owning layer that only that output uses gets no gradient ('making sure
    all forward function outputs participate in calculating loss'). Returns of another shape (the single tensor an
    ``if not self.training:`` arm returns) are left aside."""
    forward = next((f for f in cls.node.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
    returns = [n.value for n in ast.walk(forward) if isinstance(n, ast.Return)] if forward is not None else []
    slots = _output_slots(returns)
    wrapper = wrap.assigned_to
    calls = _calls_by_text(m).get(wrapper, []) if wrapper else []
    if not slots or not calls:
        return
    used: set = set()
    for call in calls:
        reached = _slots_reaching_loss(call, slots)
        if reached is None:
            return  # a call that keeps the whole output where it cannot be followed: cannot tell
        used |= reached
    dropped = set(slots) - used
    if not dropped:
        return
    assigned = _assignments(forward)
    kept_attrs, dropped_attrs = set(), set()
    for slot, elements in slots.items():
        for element in elements:
            (dropped_attrs if slot in dropped else kept_attrs).update(_self_attrs(element, assigned))
    elsewhere = _used_beyond_returns(forward, assigned)
    for attr in sorted(a for a in dropped_attrs - kept_attrs - elsewhere
                       if a in cls.params and a not in cls.conditional_init and a not in frozen):
        yield Hit(wrap.line, f"self.{attr} feeds only an output of {cls.name}.forward that every call of {wrapper} "
                             f"throws away or keeps out of the loss it calls backward on, so its parameters get no "
                             f"gradient and DDP({model}) without find_unused_parameters=True fails with 'Expected to "
                             "have finished reduction in the prior iteration'", {"model": model, "variable": f"self.{attr}"})


def _output_slots(returns: list) -> dict:
    """Slot (position, or literal dict key) -> the expressions forward returns there, over the returns of the one
    multi-output shape forward has (tuples/lists of one length, or dicts with literal keys); {} otherwise."""
    sequences = [r for r in returns if isinstance(r, (ast.Tuple, ast.List))]
    dicts = [r for r in returns if isinstance(r, ast.Dict)]
    slots: dict = {}
    if sequences and not dicts and len({len(r.elts) for r in sequences}) == 1 and len(sequences[0].elts) > 1:
        for r in sequences:
            for i, element in enumerate(r.elts):
                slots.setdefault(i, []).append(element)
    elif dicts and not sequences:
        for r in dicts:
            if any(k is None or not isinstance(k, ast.Constant) for k in r.keys):
                return {}
            for key, value in zip(r.keys, r.values):
                slots.setdefault(key.value, []).append(value)
        if len(slots) < 2:
            return {}
    return slots


def _slots_reaching_loss(call, slots: dict) -> set | None:
    """The output slots one call of the wrapper lets reach the loss its function calls backward on; None when that
    cannot be told (no backward in the function, the whole output passed on)."""
    unpacked = call.unpacked_to
    if unpacked:
        if len(unpacked) != len(slots) or not all(isinstance(i, int) for i in slots):
            return None
        loss = _loss_reads(call.ctx.func)
        return {i for i, name in enumerate(unpacked) if name is None or not name.startswith("_") and (
            loss is None or name in loss[0])}
    name = call.assigned_to
    loss = _loss_reads(call.ctx.func) if name else None
    if loss is None or "." in name:
        return None
    if name not in loss[0]:
        return set()
    subscripted = {id(n.value) for expr in loss[1] for n in ast.walk(expr)
                   if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name
                   and isinstance(n.slice, ast.Constant)}
    reached = set()
    for expr in loss[1]:
        for node in ast.walk(expr):
            if isinstance(node, ast.Subscript) and id(node.value) in subscripted:
                reached.add(node.slice.value)
            elif isinstance(node, ast.Name) and node.id == name and id(node) not in subscripted:
                return None  # ``criterion(out, y)``: the whole output goes on
    return reached


def _loss_reads(func) -> tuple[set[str], list[ast.AST]] | None:
    """(local names, expressions) the backward pass of ``func`` reads (``loss.backward()``,
    ``accelerator.backward(loss)``, ``scaler.scale(loss).backward()``) and every name and assigned value they are
    computed from in ``func``; None when ``func`` runs no backward (the output may reach a loss elsewhere)."""
    if func is None:
        return None
    exprs: list[ast.AST] = []
    deps: dict[str, list[ast.AST]] = {}
    for node in ast.walk(func.node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "backward":
            exprs += [node.func.value, *node.args]
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        deps.setdefault(n.id, []).append(node.value)
    if not exprs:
        return None
    names: set[str] = set()
    todo = list(exprs)
    while todo:
        for n in ast.walk(todo.pop()):
            if isinstance(n, ast.Name) and n.id not in names:
                names.add(n.id)
                for value in deps.get(n.id, ()):
                    exprs.append(value)
                    todo.append(value)
    return names, exprs


def _calls_by_text(m: ModuleIndex) -> dict[str, list[CallSite]]:
    """The module's calls by the dotted text of what they call (``model`` in ``model(x)``), in file order; sorted
    out once per module (asked per wrapped model)."""
    found = m.memo.get("unused-parameters-error.calls")
    if found is None:
        found = m.memo["unused-parameters-error.calls"] = {}
        for c in m.calls:
            text = dotted(c.node.func)
            if text:
                found.setdefault(text, []).append(c)
    return found


def _used_beyond_returns(func: ast.AST, assigned: dict[str, list[ast.AST]]) -> set[str]:
    """``self.<attr>`` names a statement of ``func`` reads other than a ``return`` or an assignment to plain local
    names (a side effect, a stored auxiliary loss, a condition): their output may reach the loss another way."""
    found = set()
    for node in ast.walk(func):
        if not isinstance(node, ast.stmt) or node is func or isinstance(node, (ast.Return, ast.FunctionDef)):
            continue
        if isinstance(node, ast.Assign) and all(isinstance(t, (ast.Name, ast.Tuple)) and all(
                isinstance(e, ast.Name) for e in (t.elts if isinstance(t, ast.Tuple) else [t])) for t in node.targets):
            continue
        parts = [node.test] if isinstance(node, (ast.If, ast.While)) else [node.iter] if isinstance(node, ast.For) \
            else [] if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)) else [node]
        for part in parts:
            found |= _self_attrs(part, assigned)
    return found


def _assignments(func: ast.AST) -> dict[str, list[ast.AST]]:
    """Local name -> the values assigned to it in ``func``."""
    out: dict[str, list[ast.AST]] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        out.setdefault(name.id, []).append(node.value)
    return out


def _self_attrs(expr: ast.AST, assigned: dict[str, list[ast.AST]], depth: int = 4) -> set[str]:
    """``self.<attr>`` names an expression reads, following local variables a few assignments back."""
    found = set()
    for node in ast.walk(expr):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            found.add(node.attr)
        elif isinstance(node, ast.Name) and depth and node.id in assigned:
            for value in assigned[node.id]:
                found |= _self_attrs(value, assigned, depth - 1)
    return found


def _frozen_after_wrap(m: ModuleIndex):
    """Parameters of the wrapped model frozen (``p.requires_grad = False`` over ``.parameters()``,
    ``.requires_grad_(False)``) after the DDP wrap, without find_unused_parameters=True, while training goes on: DDP
    registered them for reduction when it was built and waits for gradients that never come (ClassyVision#398: the
    trunk frozen for fine-tuning after the wrap). Quiet when the same part was already frozen before the wrap, is
    switched back on somewhere (a GAN's per-step toggle), or the model is wrapped again after the freeze."""
    found = by_head = None  # every switch of the module, read once whatever the wraps
    for wrap in ddp_wraps(m):
        if any(const(wrap.kw(option), default=True) is not False for option in ("find_unused_parameters", "static_graph")
               if wrap.kw(option) is not None) or any(k.arg is None for k in wrap.node.keywords):
            continue  # DDP looks for the unused parameters (static_graph: records them in the first iteration)
        roots = _model_roots(m, wrap)
        if not roots:
            continue
        wrapped = wrapped_name(wrap)
        if found is None:
            found = _grad_switches(m)
            by_head = {}  # first name of the switched module -> its positions in found
            for at, (_, _, text, _, _) in enumerate(found):
                if text:
                    by_head.setdefault(text.partition(".")[0], []).append(at)
        roots = roots | ({wrapped} if wrapped else set())
        heads = {root.partition(".")[0] for root in roots}
        switches = _under_roots([found[at] for at in sorted(at for head in heads for at in by_head.get(head, ()))],
                                roots)
        for func, line, root, part, value in switches:
            if value is not False or not part or root == wrapped and wrapped == wrap.assigned_to:
                continue  # the whole model frozen: a feature extractor now (run under no_grad); ``model.x`` with
                # ``model = DDP(model)``: the bare model before the wrap (the wrapper has no such attribute)
            if not (_runs_after(m, wrap, func, line) and _trains_after(m, func, line)):
                continue
            if any(_related(part, other) and (other_value is not False or not _runs_after(m, wrap, other_func, other_line))
                   for other_func, other_line, _, other, other_value in switches if other_line != line):
                continue
            if any(_wraps_after(again, func, line) for again in ddp_wraps(m) if again is not wrap):
                continue
            model = wrapped or "model"
            target = f"{root}.{part}" if not part.startswith("<") else f"part of {root}"
            yield Hit(line, f"{target}'s parameters are frozen (requires_grad=False) after DDP wrapped {model} "
                            f"(line {wrap.line}): DDP registered them for gradient reduction when it was built and "
                            "waits for their gradients, so the backward fails with 'Expected to have finished "
                            "reduction in the prior iteration'; freeze before wrapping (or wrap again)",
                      {"model": model, "variable": target})
            return


def _related(part: str, other: str) -> bool:
    """One module path holds the other ("" is the whole model)."""
    return part == other or not part or not other or part.startswith(other + ".") or other.startswith(part + ".")


def _model_roots(m: ModuleIndex, wrap: CallSite) -> set[str]:
    """Dotted names that reach the wrapped model's own modules after the wrap: the wrapped name when the wrapper is
    bound to another name, ``<wrapper>.module``, and names bound to ``<wrapper>.module`` (``model_without_ddp``)."""
    wrapped, wrapper = wrapped_name(wrap), wrap.assigned_to
    roots = set()
    if wrapped and wrapped != wrapper:
        roots.add(wrapped)
    if wrapper:
        roots.add(f"{wrapper}.module")
        for node in _assigned(m)[0].get(f"{wrapper}.module", ()):
            roots |= {dotted(t) for t in node.targets if dotted(t)}
    return roots


def _assigned(m: ModuleIndex) -> tuple[dict[str, list[ast.Assign]], dict[str, list[ast.Assign]]]:
    """The module's assignments by the dotted text of their value, and by each plain name they bind (walk order),
    sorted out once per module: the questions asked per wrap and per freeze stay linear."""
    found = m.memo.get("unused-parameters-error.assigned")
    if found is None:
        by_value: dict[str, list[ast.Assign]] = {}
        by_name: dict[str, list[ast.Assign]] = {}
        for node in m.nodes_of(ast.Assign):
            text = dotted(node.value)
            if text:
                by_value.setdefault(text, []).append(node)
            for name in {t.id for t in node.targets if isinstance(t, ast.Name)}:
                by_name.setdefault(name, []).append(node)
        found = m.memo["unused-parameters-error.assigned"] = by_value, by_name
    return found


def _grad_switches(m: ModuleIndex) -> list[tuple]:
    """(function, line, dotted text of the switched module, value, picked) for each ``requires_grad`` switch of the
    module: ``x.requires_grad_(v)``, or ``p.requires_grad = v`` in a loop over ``x.(named_)parameters()`` (picked:
    under an ``if`` of the loop, ``if name.startswith("backbone"):``, which picks a part); ``value`` is the literal
    (None when not a literal). Read once per module; :func:`_under_roots` keeps those of one wrapped model."""
    found = []
    for infos in m.functions.values():
        for info in infos:
            if info.name == "<class>":
                continue
            for node in m.nodes_in(info.node):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr == "requires_grad_":
                    found.append((info, node.lineno, dotted(node.func.value),
                                  const(node.args[0], default=None) if node.args else True, False))
                elif isinstance(node, ast.For) and isinstance(node.iter, ast.Call) \
                        and isinstance(node.iter.func, ast.Attribute) \
                        and node.iter.func.attr in ("parameters", "named_parameters"):
                    text = dotted(node.iter.func.value)
                    if not text:
                        continue
                    loop_vars = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
                    for inner in m.nodes_in(node):
                        if isinstance(inner, ast.Assign) and any(
                                isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                                and dotted(t.value) in loop_vars for t in inner.targets):
                            picked = any(isinstance(n, ast.If) and inner in m.nodes_in(n) for n in m.nodes_in(node))
                            found.append((info, inner.lineno, text, const(inner.value, default=None), picked))
                            break
    return found


def _under_roots(switches: list[tuple], roots: set[str]) -> list[tuple]:
    """(function, line, root, module path under the root, value) for each switch of a module under one of
    ``roots`` (the longest root that holds it); a picked part of the whole model is ``"<some parameters>"``."""
    ordered = sorted(roots, key=len, reverse=True)
    out = []
    for info, line, text, value, picked in switches:
        if not text:
            continue
        root = next((r for r in ordered if text == r or text.startswith(r + ".")), None)
        if root is None:
            continue
        part = text[len(root) + 1:]
        out.append((info, line, root, "<some parameters>" if picked and not part else part, value))
    return out


def _runs_after(m: ModuleIndex, wrap: CallSite, func, line: int) -> bool:
    """The freeze at ``line`` in ``func`` runs after ``wrap``: later in the same function, or (through one caller)
    the caller calls the wrapping function before the freezing one (or before its own freeze)."""
    wrapping = wrap.ctx.func
    if func is wrapping:
        return line > wrap.line
    if wrapping is None:
        return False
    for site in callers_of(m, wrapping):
        if site.ctx.func is None:
            continue
        caller = site.ctx.func
        if caller is func and line > site.line:
            return True
        if any(later.ctx.func is caller and later.line > site.line for later in callers_of(m, func)):
            return True
    return False


def _wraps_after(wrap: CallSite, func, line: int) -> bool:
    """``wrap`` wraps the model again after the freeze at ``line`` of ``func`` (the fix: DDP built after freezing)."""
    return wrap.ctx.func is func and wrap.line > line


def _trains_after(m: ModuleIndex, func, line: int) -> bool:
    """A backward or an optimizer step runs after ``line`` of ``func``: later in it (directly or through a local
    function), or in a function its caller calls after calling ``func``. A freeze once training is over (before an
    export or a final evaluation) fails nothing."""
    memo: dict[int, bool] = {}

    def trains(info, depth: int) -> bool:
        if id(info) not in memo:
            memo[id(info)] = False
            memo[id(info)] = any(_steps(m, s) or (depth and (c := local_callee(m, s)) is not None and c is not info
                                                   and trains(c, depth - 1))
                                 for s in m.sites_in(info.node) if s.ctx.func is info)
        return memo[id(info)]

    def later(info, after: int) -> bool:  # info None: the module's top level (``if __name__ == "__main__":``)
        return any(s.ctx.func is info and s.line > after and (
            _steps(m, s) or ((c := local_callee(m, s)) is not None and c is not info and trains(c, 3)))
            for s in (m.sites_in(info.node) if info is not None else m.calls))

    todo, seen = [(func, line)], set()
    for _ in range(3):  # the freezing function, its callers, theirs
        found = []
        for info, after in todo:
            if later(info, after):
                return True
            if info is None or id(info) in seen:
                continue
            seen.add(id(info))
            found += [(site.ctx.func, site.line) for site in callers_of(m, info)]
        todo = found
    return False


def _steps(m: ModuleIndex, site: CallSite) -> bool:
    """A backward pass or an optimizer step (``training_step_calls``)."""
    return m.P.matches("training_step_calls", f"{site.recv.rpartition('.')[2]}.{site.method}" if site.recv
                       else site.method)


_MODULE_WALKS = ("parameters", "named_parameters", "modules", "named_modules", "children", "named_children")


def _frozen_parts(m: ModuleIndex) -> set[str] | None:
    """The attribute names along every path a freeze of this file reaches (``self.aux.requires_grad_(False)``,
    ``p.requires_grad = False`` over ``net.backbone.parameters()``, a ``freeze(module)`` helper called as
    ``freeze(net.fc)``, ``nn.Parameter(..., requires_grad=False)``, ``if "head" in name:`` over named parameters):
    an unused layer among them is frozen, not forgotten. Reads (``if p.requires_grad``, an optimizer's filter) freeze
    nothing. None when a freeze reaches a part we cannot name (the whole wrapped model, a test on names we cannot
    read, a list built elsewhere)."""
    parents = parent_map(m.tree)
    wrapped = set()
    for site in ddp_wraps(m):
        wrapped |= {n for n in (wrapped_name(site), site.assigned_to) if n}
    for site in m.calls:
        if site.method in m.P.ddp_returning_preparers and site.recv is not None:
            wrapped |= {n for n in [*(dotted(a) for a in site.node.args), *site.unpacked_to] if n}
    parts: set[str] = set()
    for node in m.nodes_in(m.tree):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_":
            value = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "requires_grad"),
                                                        None)
            if value is None or const(value, default=None) is True:
                continue
            target = node.func.value
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                                                  for t in node.targets):
            if const(node.value, default=None) is True:
                continue
            target = next(t.value for t in node.targets if isinstance(t, ast.Attribute) and t.attr == "requires_grad")
        elif isinstance(node, ast.Call) and m.qual(node.func) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            flag = next((k.value for k in node.keywords if k.arg == "requires_grad"), None)
            if flag is None or const(flag, default=None) is True:
                continue
            owner = parents.get(id(node))
            target = owner.targets[0] if isinstance(owner, ast.Assign) and len(owner.targets) == 1 else None
            if target is None:
                return None
        elif isinstance(node, ast.Call) and dotted(node.func) == "setattr" and any(
                const(a, default=None) == "requires_grad" for a in node.args):
            return None
        else:
            continue
        found = _reached(m, target, node, parents, wrapped, 2)
        if found is None:
            return None
        parts |= found
    return parts


def _reached(m: ModuleIndex, expr: ast.AST, at: ast.AST, parents: dict, wrapped: set[str], depth: int) -> set[str] | None:
    """Attribute names on the path ``expr`` (read at node ``at``) names, through a loop variable (the loop's
    iterable), a parameter of the enclosing function (the arguments of its calls) or a local alias."""
    root, attrs = _chain(expr)
    if root is None:
        return None
    text = dotted(expr) or ""
    if text.removesuffix(".module") in wrapped or (root in wrapped and not [a for a in attrs if a != "module"]):
        return None  # the whole wrapped model
    scope = at
    while scope is not None:
        scope = parents.get(id(scope))
        if isinstance(scope, (ast.For, ast.AsyncFor, ast.comprehension)) and root in _bound_names(scope.target):
            return _iterated(m, scope, parents, wrapped, depth) if depth else None
        if isinstance(scope, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for gen in scope.generators:
                if root in _bound_names(gen.target):
                    return _iterated(m, gen, parents, wrapped, depth) if depth else None
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            params = [a.arg for a in scope.args.args]
            if root in params and root not in ("self", "cls"):
                return _passed(m, scope, params.index(root), attrs, parents, wrapped, depth) if depth else None
            break
    named = {a for a in attrs if a != "module"}
    if root in ("self", "cls") and not named:
        return None  # a module freezing itself: which class is the model's
    bound = _assigned(m)[1].get(root, ())  # the ``root = ...`` statements
    alias = next((n for n in bound if _chain(n.value)[0] not in (None, root)), None)
    if alias is not None and depth:
        found = _reached(m, alias.value, alias, parents, wrapped, depth - 1)
        return None if found is None else found | named
    if not named and not any(isinstance(n.value, ast.Call) for n in bound):
        return None  # a list or a parameter of unknown modules (``for layer in frozen:``)
    return named  # empty for another model built here (``teacher = Net()``, frozen whole)


def _chain(expr: ast.AST) -> tuple[str | None, list[str]]:
    """``self.layers[0].weight`` -> ("self", ["layers", "weight"]); (None, []) through a call."""
    attrs = []
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        if isinstance(expr, ast.Attribute):
            attrs.append(expr.attr)
        expr = expr.value
    return (expr.id, attrs[::-1]) if isinstance(expr, ast.Name) else (None, [])


def _bound_names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _iterated(m: ModuleIndex, loop, parents: dict, wrapped: set[str], depth: int) -> set[str] | None:
    """What a loop over ``net.backbone.parameters()`` (or ``self.layers[:2]``) reaches; a test on parameter names in
    the loop body (``if "head" in name``) narrows it to the names it spells, a negated one cannot be read."""
    sources = [n.func.value for n in ast.walk(loop.iter) if isinstance(n, ast.Call)
               and isinstance(n.func, ast.Attribute) and n.func.attr in _MODULE_WALKS]
    if not sources:
        sources = [n for n in ast.walk(loop.iter) if isinstance(n, (ast.Attribute, ast.Name))
                   and not isinstance(parents.get(id(n)), ast.Attribute)]
    if not sources:
        return None
    found: set[str] = set()
    for source in sources:
        part = _reached(m, source, loop, parents, wrapped, depth - 1)
        if part is None and isinstance(loop, (ast.For, ast.AsyncFor)):
            part = _named_in_tests(loop)
        if part is None:
            return None
        found |= part
    return found


def _named_in_tests(loop: ast.For) -> set[str] | None:
    """The path parts a loop over a whole model's named parameters picks by a positive test on the name
    (``if name.startswith("backbone."):``, ``if "aux" in name:``); None for a negated or literal-free test."""
    tests = [n.test for n in ast.walk(loop) if isinstance(n, ast.If)]
    if not tests:
        return None
    found: set[str] = set()
    for test in tests:
        if any(isinstance(n, (ast.Not, ast.NotIn, ast.NotEq)) for n in ast.walk(test)):
            return None
        words = [const(n) for n in ast.walk(test) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        if not words:
            return None
        found |= {part for word in words for part in word.split(".") if part}
    return found


def _passed(m: ModuleIndex, func, index: int, attrs: list[str], parents: dict, wrapped: set[str],
            depth: int) -> set[str] | None:
    """What a freeze of parameter number ``index`` of ``func`` reaches: the arguments of its calls in this file
    (none when nothing calls it)."""
    found = {a for a in attrs if a != "module"}
    for site in m.calls:
        callee = local_callee(m, site)
        if callee is None or callee.node is not func:
            continue
        offset = 1 if callee.cls is not None and func.args.args and func.args.args[0].arg == "self" else 0
        args = site.node.args
        if index - offset >= len(args) or index - offset < 0 or any(isinstance(a, ast.Starred) for a in args):
            return None
        part = _reached(m, args[index - offset], site.node, parents, wrapped, depth - 1)
        if part is None:
            return None
        found |= part
    return found
