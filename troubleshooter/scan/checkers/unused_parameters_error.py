"""unused-parameters-error: a DDP model whose forward skips parameters, without find_unused_parameters."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import wrapped_name
from troubleshooter.scan.checkers._modules import (
    ALWAYS, INPUT, RANDOM, ModelClass, analyse, flag_off, prepared_classes, wrapped_classes)
from troubleshooter.scan.model import ModuleIndex, const, dotted


class UnusedParametersErrorChecker(Checker):
    """A parameter-owning submodule never used by forward, or used only on some inputs."""

    id = "unused-parameters-error"

    def check(self, m):
        if "requires_grad" in m.text:
            return  # frozen layers are legitimately unused; we cannot tell which
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
