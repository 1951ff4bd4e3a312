"""unused-parameters-error: a DDP model whose forward skips parameters, without find_unused_parameters."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import ddp_wraps, local_callee, wrapped_name
from troubleshooter.scan.checkers._modules import (
    ALWAYS, INPUT, RANDOM, ModelClass, analyse, flag_off, prepared_classes, wrapped_classes)
from troubleshooter.scan.model import CallSite, ModuleIndex, const, dotted


class UnusedParametersErrorChecker(Checker):
    """A parameter-owning submodule never used by forward, or used only on some inputs."""

    id = "unused-parameters-error"

    def check(self, m):
        if "requires_grad" in m.text:
            yield from _frozen_after_wrap(m)
            return  # layers frozen before the wrap are legitimately unused; we cannot tell which
        for wrap, cls in [*wrapped_classes(m), *prepared_classes(m)]:
            flag = wrap.kw("find_unused_parameters")
            if flag is not None and const(flag, default=True) is not False:
                continue
            if wrap.method in m.P.model_preparers and any(
                    const(site.kw("find_unused_parameters"), default=True) is not False
                    for site in m.calls_named(m.P.ddp_settings)):
                continue  # ``Accelerator(kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)])``
            if cls.dynamic:
                continue
            model = wrapped_name(wrap) or "model"
            yield from self._unused_in_submodules(m, wrap, cls, model)
            yield from _discarded_outputs(m, wrap, cls, model)
            for attr, line in sorted(cls.params.items(), key=lambda kv: kv[1]):
                if attr in cls.conditional_init:
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
    def _unused_in_submodules(m, wrap, cls: ModelClass, model: str):
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
                if attr in sub.conditional_init:
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


def _discarded_outputs(m, wrap, cls: ModelClass, model: str):
    """forward returns a tuple and every call of the wrapper throws one element away (``logits, _ = model(x)``):
    a parameter-owning layer that only that element uses gets no gradient ('making sure all forward function
    outputs participate in calculating loss')."""
    forward = next((f for f in cls.node.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
    returns = [n.value for n in ast.walk(forward) if isinstance(n, ast.Return)] if forward is not None else []
    if not returns or not all(isinstance(r, ast.Tuple) for r in returns) or len({len(r.elts) for r in returns}) != 1:
        return
    wrapper = wrap.assigned_to
    calls = [c for c in m.calls if wrapper and dotted(c.node.func) == wrapper]
    if not calls or not all(len(c.unpacked_to) == len(returns[0].elts) for c in calls):
        return  # a call that keeps the whole tuple (or none at all): cannot tell
    dropped = {i for i in range(len(returns[0].elts)) if all(
        (c.unpacked_to[i] or "").startswith("_") for c in calls)}
    if not dropped:
        return
    assigned = _assignments(forward)
    kept_attrs, dropped_attrs = set(), set()
    for ret in returns:
        for i, element in enumerate(ret.elts):
            (dropped_attrs if i in dropped else kept_attrs).update(_self_attrs(element, assigned))
    elsewhere = _used_beyond_returns(forward, assigned)
    for attr in sorted(a for a in dropped_attrs - kept_attrs - elsewhere
                       if a in cls.params and a not in cls.conditional_init):
        yield Hit(wrap.line, f"self.{attr} feeds only an output of {cls.name}.forward that every call of {wrapper} "
                             f"throws away ('_'), so its parameters get no gradient and DDP({model}) without "
                             "find_unused_parameters=True fails with 'Expected to have finished reduction in the prior "
                             "iteration'", {"model": model, "variable": f"self.{attr}"})


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
    for wrap in ddp_wraps(m):
        if any(const(wrap.kw(option), default=True) is not False for option in ("find_unused_parameters", "static_graph")
               if wrap.kw(option) is not None) or any(k.arg is None for k in wrap.node.keywords):
            continue  # DDP looks for the unused parameters (static_graph: records them in the first iteration)
        roots = _model_roots(m, wrap)
        if not roots:
            continue
        wrapped = wrapped_name(wrap)
        switches = list(_grad_switches(m, roots | ({wrapped} if wrapped else set())))
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
        for node in ast.walk(m.tree):
            if isinstance(node, ast.Assign) and dotted(node.value) == f"{wrapper}.module":
                roots |= {dotted(t) for t in node.targets if dotted(t)}
    return roots


def _grad_switches(m: ModuleIndex, roots: set[str]):
    """(function, line, root, module path under the root, value) for each ``requires_grad`` switch of a module under
    one of ``roots``: ``x.requires_grad_(v)``, or ``p.requires_grad = v`` in a loop over ``x.(named_)parameters()``;
    ``value`` is the literal (None when not a literal)."""
    def split(expr: ast.AST) -> tuple[str, str] | None:
        text = dotted(expr)
        if not text:
            return None
        for root in sorted(roots, key=len, reverse=True):
            if text == root or text.startswith(root + "."):
                return root, text[len(root) + 1:]
        return None

    for infos in m.functions.values():
        for info in infos:
            if info.name == "<class>":
                continue
            for node in m.nodes_in(info.node):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr == "requires_grad_":
                    where = split(node.func.value)
                    if where:
                        yield info, node.lineno, *where, const(node.args[0], default=None) if node.args else True
                elif isinstance(node, ast.For) and isinstance(node.iter, ast.Call) \
                        and isinstance(node.iter.func, ast.Attribute) \
                        and node.iter.func.attr in ("parameters", "named_parameters"):
                    where = split(node.iter.func.value)
                    loop_vars = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
                    for inner in m.nodes_in(node) if where else ():
                        if isinstance(inner, ast.Assign) and any(
                                isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                                and dotted(t.value) in loop_vars for t in inner.targets):
                            root, part = where
                            if not part and any(isinstance(n, ast.If) and inner in m.nodes_in(n)
                                                for n in m.nodes_in(node)):
                                part = "<some parameters>"  # ``if name.startswith("backbone"):`` picks a part
                            yield info, inner.lineno, root, part, const(inner.value, default=None)
                            break


def _runs_after(m: ModuleIndex, wrap: CallSite, func, line: int) -> bool:
    """The freeze at ``line`` in ``func`` runs after ``wrap``: later in the same function, or (through one caller)
    the caller calls the wrapping function before the freezing one (or before its own freeze)."""
    wrapping = wrap.ctx.func
    if func is wrapping:
        return line > wrap.line
    if wrapping is None:
        return False
    for site in m.calls:
        if local_callee(m, site) is not wrapping or site.ctx.func is None:
            continue
        caller = site.ctx.func
        if caller is func and line > site.line:
            return True
        if any(later.ctx.func is caller and later.line > site.line and local_callee(m, later) is func
               for later in m.calls):
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
            found += [(site.ctx.func, site.line) for site in m.calls if local_callee(m, site) is info]
        todo = found
    return False


def _steps(m: ModuleIndex, site: CallSite) -> bool:
    """A backward pass or an optimizer step (``training_step_calls``)."""
    return m.P.matches("training_step_calls", f"{site.recv.rpartition('.')[2]}.{site.method}" if site.recv
                       else site.method)
