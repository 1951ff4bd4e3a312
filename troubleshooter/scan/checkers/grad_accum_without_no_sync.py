"""grad-accum-without-no-sync: gradient accumulation under DDP that all-reduces on every micro-step."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import (
    argument_given, contains, ddp_wraps, local_callee, option_default, takes_parameter, wrapped_models,
    value_returns, wrapped_name,
)
from troubleshooter.scan.model import CallSite, ModuleIndex, const, dotted, last

_BACKWARD_ONLY = ("backward", "scale", "div", "__truediv__")
_SYNC_FLAG = "require_backward_grad_sync"  # DDP's own switch under no_sync(), read by its forward pass
_CALL_DEPTH = 3  # local calls followed from the loop to the backward and the accumulation gate


class GradAccumWithoutNoSyncChecker(Checker):
    """A loop with backward() every iteration and optimizer.step() only every k-th, and no no_sync();
    or a no_sync() that wraps only the backward pass (DDP decides in the forward whether to all-reduce)."""

    id = "grad-accum-without-no-sync"

    def check(self, m):
        wrappers = wrapped_models(m) or {  # ``Trainer(DDP(model, ...))``: a wrap handed over unnamed
            wrapped_name(site) or "model": site for site in ddp_wraps(m)}
        if not wrappers or any(m.methods(name) for name in m.P.gradient_sync_skippers):
            return
        if any(_SYNC_FLAG in n for n in [*m.loaded, *m.bindings]):
            yield from _flag_set_after_forward(m)  # (nanoGPT: ``model.require_backward_grad_sync = ...``)
            return
        model = next(iter(wrappers))
        no_sync = m.methods("no_sync")
        chosen = [] if no_sync else _chosen_by_reference(m)
        if no_sync:
            yield from self._backward_only(m, no_sync, model)
            return
        reported: set[int] = set()
        for loop in m.loops:
            backward = self._backward_in(m, loop.node)
            if not backward:
                continue
            gate = self._accum_gate(m, loop.node)
            if gate is None:  # the step may be gated inside the method that runs the backward (train_step)
                gate, backward = self._gate_in_callee(m, backward)
            if gate is None or any(contains(gate, b.node) for b in backward) or backward[0].line in reported:
                continue
            if any(_skips_exactly_off_the_step(test, skip_in_body, gate) for test, skip_in_body in chosen):
                continue  # ``ctx = model.no_sync if (i + 1) % k != 0 else nullcontext``: skipped off the step only
            predicate = _accum_predicate(m, gate.test)  # ``if self._should_step():`` -> its ``%`` test
            steps = self._accum_name(predicate if predicate is not None else gate.test) or _named_count(m, gate.test)
            if steps and _off_by_default(m, steps, loop.ctx.func):
                continue  # accumulation off by default (count 1)
            reported.add(backward[0].line)
            # the harm (one extra all-reduce per micro-step) needs a count above 1: shown by the file, or advice
            divisor = next((n.right for n in ast.walk(predicate or gate.test) if isinstance(n, ast.BinOp)
                            and isinstance(n.op, ast.Mod)), None)  # ``cfg["train"]["accum"]``: no name
            seen = _count_seen(m, steps, loop.ctx.func) if steps else (
                divisor is None or _value_seen(m, divisor, loop.ctx.func, 0))
            severity = None if seen else "info"
            when = f"skipped while {ast.unparse(gate.test)}" if _skips_rest(gate) else f"only when {ast.unparse(gate.test)}"
            yield Hit(backward[0].line, f"gradients are accumulated (optimizer step {when}) "
                                        f"but every {backward[0].recv or 'loss'}.backward() still all-reduces: wrap "
                                        f"the non-final micro-steps in {model}.no_sync()",
                      {"model": model, "variable": steps or "accumulation_steps"}, severity=severity)
        for loop, backward, count in self._micro_batch_loops(m):
            if backward[0].line in reported:
                continue
            reported.add(backward[0].line)
            yield Hit(backward[0].line, f"each step runs backward() once per micro-batch (`{_loop_head(loop)}`) and "
                                        "steps the optimizer after the loop, but every backward still all-reduces: "
                                        f"wrap all micro-batches but the last in {model}.no_sync()",
                      {"model": model, "variable": count or "accumulation_steps"})

    @classmethod
    def _micro_batch_loops(cls, m: ModuleIndex):
        """(loop, its backward calls, its count) for an inner loop over micro-batches: each iteration runs
        backward(), no optimizer step inside it, and the optimizer steps after it at the loop's own nesting level
        (open_lm#60: ``for ii in range(args.accum_freq): ... local_loss.backward()`` then ``optimizer.step()``).
        Its count must be seen above 1 (``range(k)`` with ``k`` so bound, or a literal), or it is a split of the
        batch (``inputs.chunk(k)``, ``torch.split``)."""
        for loop in m.loops:
            if not isinstance(loop.node, ast.For):
                continue
            backward = [b for b in cls._backward_in(m, loop.node) if b.method == "backward"]
            if not backward or any(_optimizer_step(s) for s in m.sites_in(loop.node)) or any(
                    "sync" in last(w).lower() or last(w) in m.P.gradient_sync_skippers
                    for b in backward for w in b.ctx.withs):
                continue  # (edm: ``with misc.ddp_sync(ddp, round_idx == rounds - 1):`` a project's own no_sync)
            after = [s for s in m.calls if _optimizer_step(s) and s.ctx.func is loop.ctx.func
                     and s.line > loop.node.end_lineno and s.ctx.loops == loop.ctx.loops]
            if not after:
                continue
            count = _micro_count(m, loop)
            if count is not None:
                yield loop, backward, count or None


    @staticmethod
    def _backward_in(m: ModuleIndex, loop: ast.AST) -> list[CallSite]:
        """backward() calls run by each iteration of ``loop`` itself (directly or through the local functions and
        methods it calls: ``task.train_step(batch)`` -> ``self.run_optimizer(loss)`` -> ``loss.backward()``)."""
        found = []
        for site in m.sites_in(loop):
            if not site.ctx.loops or site.ctx.loops[-1] is not loop:
                continue
            if site.method == "backward":
                found.append(site)
                continue
            callee = local_callee(m, site)
            if callee is not None and _runs_backward(m, callee, _CALL_DEPTH):
                found.append(site)
        return found

    @classmethod
    def _gate_in_callee(cls, m: ModuleIndex, calls: list[CallSite]):
        """(gate, its backward calls) when a local function the loop calls (or one it calls in turn) runs backward()
        on every call and steps the optimizer only under an accumulation test."""
        todo = [(local_callee(m, call), 0) for call in calls if call.method != "backward"]
        seen: set[int] = set()
        while todo:
            callee, depth = todo.pop(0)
            if callee is None or id(callee) in seen:
                continue
            seen.add(id(callee))
            gate = cls._accum_gate(m, callee.node)
            own = [s for s in m.sites_in(callee.node) if s.ctx.func is callee]
            inner = [s for s in own if s.method == "backward"]
            if gate is not None and inner:
                return gate, inner
            if depth < _CALL_DEPTH:
                todo += [(local_callee(m, s), depth + 1) for s in own if s.method != "backward"]
        return None, calls

    @staticmethod
    def _backward_only(m: ModuleIndex, no_sync: list[CallSite], model: str):
        """no_sync() whose ``with`` blocks hold nothing but the backward pass: the forward ran outside it."""
        contexts = {s.assigned_to for s in no_sync if s.assigned_to} | {
            b.target for name in m.bindings for b in m.bindings[name]
            if any(contains(b.value, s.node) for s in no_sync)}
        inside = [s for s in m.calls if any(last(w) == "no_sync" or w in contexts for w in s.ctx.withs)]
        inside += [s for s in _under_chosen_no_sync(m, no_sync) if s not in inside]
        if inside and all(s.method in _BACKWARD_ONLY for s in inside):
            first = min(inside, key=lambda s: s.line)
            yield Hit(first.line, f"{model}.no_sync() wraps only the backward pass: DDP decides in the forward "
                                  "whether to all-reduce, so every micro-step still all-reduces; run the forward "
                                  f"inside {model}.no_sync() too", {"model": model, "variable": "no_sync"})

    @staticmethod
    def _accum_gate(m, loop: ast.AST) -> ast.If | None:
        for node in m.nodes_in(loop):
            if node.__class__ is not ast.If:
                continue
            test_is_accum = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in m.nodes_in(node.test)) \
                or "accum" in ast.unparse(node.test).lower() or _named_accum(m, node.test) \
                or _accum_predicate(m, node.test) is not None
            stepped = [s for s in m.sites_in(node)] if not _skips_rest(node) else [  # backward; if i % k: continue; step
                s for s in m.sites_in(loop) if s.line > node.end_lineno] if any(
                s.method == "backward" and s.line < node.lineno for s in m.sites_in(loop)) else []
            if test_is_accum and any(s.method == "step" and s.recv and ("optim" in s.recv.lower() or
                                     last(s.recv) in ("opt", "scaler")) for s in stepped):
                return node
        return None

    @staticmethod
    def _accum_name(test: ast.AST) -> str | None:
        """The accumulation count the gate tests: the divisor of ``step % k`` (whatever its name), else a name
        that says so (``accum_iter``)."""
        for node in ast.walk(test):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and dotted(node.right):
                return dotted(node.right)
        for node in ast.walk(test):
            text = dotted(node)
            if text and "accum" in text.lower():
                return text
        return None


def _optimizer_step(site: CallSite) -> bool:
    """``optimizer.step()`` / ``scaler.step(optimizer)`` (by the receiver's name)."""
    return site.method == "step" and bool(site.recv) and ("optim" in site.recv.lower() or last(site.recv) in (
        "opt", "scaler"))


def _flag_set_after_forward(m: ModuleIndex):
    """``model.require_backward_grad_sync = (micro_step == steps - 1)`` set in a loop after that model's forward
    call of the same iteration and before the backward (build-nanogpt#30): DDP reads the flag in the forward pass,
    so the micro-steps it means to skip still all-reduce, and the last one's forward ran with the previous value.
    Set before the forward (nanoGPT's train.py), it is the hand-written ``no_sync()`` and stays quiet."""
    for target, bindings in m.bindings.items():
        owner, _, attr = target.rpartition(".")
        if attr != _SYNC_FLAG:
            continue
        for flag in bindings:
            if not flag.ctx.loops:
                continue
            loop = flag.ctx.loops[-1]
            own = [s for s in m.sites_in(loop) if s.ctx.loops and s.ctx.loops[-1] is loop]
            forward = next((s for s in own if s.line < flag.line and dotted(s.node.func) == owner), None)
            backward = next((s for s in own if s.line > flag.line and s.method == "backward"), None)
            if forward is not None and backward is not None:
                yield Hit(flag.line, f"{target} is set after {owner}(...) ran the forward pass (line {forward.line}): "
                                     "DDP reads it in the forward, so every micro-step still all-reduces; set it "
                                     f"before the forward call (or use {owner}.no_sync() around forward and backward)",
                          {"model": owner, "variable": _SYNC_FLAG})


def _loop_head(loop) -> str:
    return f"for {ast.unparse(loop.node.target)} in {ast.unparse(loop.node.iter)}"


def _micro_count(m: ModuleIndex, loop) -> str | None:
    """The micro-batch count of ``for ... in range(k)`` when the file shows it above 1 (its name, or "" for a
    literal); "" for a split of the batch (``x.chunk(k)``, ``torch.split(x, n)``); None otherwise."""
    it = loop.node.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and len(it.args) == 1:
        arg = it.args[0]
        if const(arg, default=...) is not ...:
            return "" if _value_seen(m, arg, loop.ctx.func, 0) else None
        name = dotted(arg)
        return name if name and _count_seen(m, name, loop.ctx.func) else None
    calls = [n for n in ast.walk(it) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    return "" if any(c.func.attr in m.P.batch_split_methods for c in calls) else None


def _skips_rest(node: ast.If) -> bool:
    """``if (i + 1) % k != 0: continue``: the test gates what follows it in the loop, not its own body."""
    return not node.orelse and len(node.body) == 1 and isinstance(node.body[0], ast.Continue)


def _fallback_count(value: ast.AST) -> bool:
    """``accum = 1``, raised only under a condition: accumulation is off in the usual configuration.
    (``max(round(nominal / batch), 1)`` is not: it accumulates whenever the batch is small, and maintainers
    accepted no_sync there - ultralytics/yolov5#790.)"""
    return const(value) == 1


def _off_by_default(m: ModuleIndex, steps: str, func, depth: int = 0) -> bool:
    """The accumulation count is 1 in the usual configuration: bound to 1 in the loop's function and raised only as
    a fallback for batches too big or too small, or read from a command-line option defaulting to 1
    (``--update_freq``); or handed over (``self.k = k`` in the constructor or a set-up method, ``k`` a parameter)
    by a caller whose own value is one of those (the loop moved into a trainer class), or bound once to a name that
    is (``k = args.accum``)."""
    local = [b for b in m.bindings.get(steps, ()) if b.func is func]
    if any(_fallback_count(b.value) for b in local):
        return True
    if const(option_default(m, steps)) == 1:
        return True
    if depth >= 2:
        return False
    if len(local) == 1 and dotted(local[0].value):  # ``k = args.accum``: the option it reads
        return _off_by_default(m, dotted(local[0].value), func, depth + 1)
    if not local and any(_off_by_default(m, name, helper, depth + 1) for name, helper in _returned_as(m, steps, func)):
        return True
    for binding in m.bindings.get(steps, ()):
        holder = binding.func
        if holder is None or binding.value.__class__ is not ast.Name:
            continue
        params = [a.arg for a in [*holder.node.args.posonlyargs, *holder.node.args.args]]
        params = params[1:] if params and params[0] in ("self", "cls") else params
        if binding.value.id not in params:
            continue
        position = params.index(binding.value.id)
        called = holder.cls if holder.name == "__init__" and holder.cls else holder.name
        for site in m.calls:
            if site.method != called:
                continue
            passed = site.kw(binding.value.id)
            if passed is None and position < len(site.node.args):
                passed = site.node.args[position]
            name = dotted(passed) if passed is not None else None
            if name and _off_by_default(m, name, site.ctx.func, depth + 1):
                return True
    return False


def _returned_as(m: ModuleIndex, name: str, func) -> list[tuple[str, object]]:
    """(name, helper) for ``k, loader, model = setup(...)`` in ``func``: the name each ``return k, loader, model``
    of the local helper gives ``k`` at its position (the count bound in a set-up function)."""
    scope = func.node if func is not None else m.tree
    found = []
    for node in m.nodes_in(scope):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        target = next((t for t in node.targets if isinstance(t, ast.Tuple)
                       and name in [dotted(e) for e in t.elts]), None)
        made = m.site_of(node.value) if target is not None else None
        helper = local_callee(m, made) if made is not None else None
        if helper is None:
            continue
        position = [dotted(e) for e in target.elts].index(name)
        for ret in m.nodes_in(helper.node):
            if (isinstance(ret, ast.Return) and isinstance(ret.value, ast.Tuple)
                    and len(ret.value.elts) == len(target.elts) and dotted(ret.value.elts[position])):
                found.append((dotted(ret.value.elts[position]), helper))
    return found


def _count_seen(m: ModuleIndex, steps: str, func, depth: int = 0) -> bool:
    """The file shows the accumulation count above 1: a literal above 1 bound to it, an option default or a keyword
    a caller passes (``Trainer(..., accum=8)``, ``train({"accum": 4})``), or a computed count (``max(round(64 /
    batch), 1)``). A count read only from a configuration the scan cannot see (``cfg.train.accum`` of a Hydra or
    OmegaConf file) is no evidence: every config a repository ships may set it to 1 (DPR, Latte)."""
    if depth > 3:
        return False
    default = option_default(m, steps)
    if default is not None:
        return _value_seen(m, default, func, depth + 1)
    bindings = [(b.value, b.func) for b in m.bindings.get(steps, ()) if b.func is func] or [
        (b.value, b.func) for b in m.bindings.get(steps, ())] or _unpacked_into(m, steps)
    if any(_value_seen(m, value, where, depth + 1) for value, where in bindings):
        return True
    return not bindings and any(_value_seen(m, value, where, depth + 1)
                                for value, where in _passed_for(m, steps, func))


def _unpacked_into(m: ModuleIndex, name: str) -> list[tuple[ast.AST, object]]:
    """(value, function) of ``self.a, self.k = a, k``: the element a tuple assignment gives the name."""
    found = []
    for func in [None, *(f for infos in m.functions.values() for f in infos)]:
        scope = m.tree if func is None else func.node
        for node in m.nodes_in(scope):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple)):
                continue
            for target in node.targets:
                if isinstance(target, ast.Tuple) and len(target.elts) == len(node.value.elts):
                    found += [(v, func) for t, v in zip(target.elts, node.value.elts) if dotted(t) == name]
    return found


def _value_seen(m: ModuleIndex, node: ast.AST, func, depth: int) -> bool:
    value = const(node, default=...)
    if value is not ...:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 1
    if isinstance(node, (ast.Name, ast.Attribute)):
        return _count_seen(m, dotted(node), func, depth) if dotted(node) else False
    if isinstance(node, ast.Subscript) and isinstance(const(node.slice, default=...), str) and dotted(node.value):
        key = const(node.slice)
        sources = [b.value for b in m.bindings.get(dotted(node.value), ()) if b.func is func] or [
            value for value, _ in _passed_for(m, dotted(node.value), func)]
        return any(isinstance(d, ast.Dict) and any(
            k is not None and const(k, default=...) == key and _value_seen(m, v, func, depth + 1)
            for k, v in zip(d.keys, d.values)) for d in sources)
    if isinstance(node, ast.Call):
        made = m.site_of(node)
        if made is not None and made.method == "get" and len(node.args) > 1:
            return _value_seen(m, node.args[1], func, depth + 1)  # ``config.get("accum", 4)``
        if made is not None and made.method in ("int", "float") and node.args:
            return _value_seen(m, node.args[0], func, depth + 1)
        return made is None or made.method not in ("get", "int", "float")  # computed: ``max(round(n / b), 1)``
    if isinstance(node, (ast.Compare, ast.BoolOp, ast.UnaryOp)):  # a flag: ``is_accumulating = i % 4 != 0``
        divisors = [n.right for n in ast.walk(node) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)]
        return not divisors or any(_value_seen(m, d, func, depth + 1) for d in divisors)
    return isinstance(node, ast.BinOp)  # ``global_batch // (micro_batch * world_size)``


def _passed_for(m: ModuleIndex, name: str, func) -> list[tuple[ast.AST, object]]:
    """(value, the caller's function) for each value callers give parameter ``name`` of ``func`` (its default
    when a call leaves it out); a constructor's parameter is given where the class is called."""
    if func is None or "." in name or not takes_parameter(func, name):
        return []
    called = func.cls if func.name == "__init__" and func.cls else func.name
    found = []
    for site in m.calls:
        if site.method == called:
            given = argument_given(func, name, site.node)
            if given is not None:
                found.append((given, site.ctx.func))
    return found


def _runs_backward(m: ModuleIndex, func, depth: int) -> bool:
    """``func`` calls backward(), itself or through local functions and methods (``depth`` levels of calls)."""
    own = [s for s in m.sites_in(func.node) if s.ctx.func is func]
    if any(s.method == "backward" for s in own):
        return True
    return depth > 0 and any(callee is not None and callee is not func and _runs_backward(m, callee, depth - 1)
                             for callee in (local_callee(m, s) for s in own))


def _accum_predicate(m: ModuleIndex, test: ast.AST) -> ast.AST | None:
    """The ``%`` test a local predicate returns when the gate calls it (``if self._should_do_step():`` with ``return
    (self.num_updates + 1) % self.optimizer_period == 0``; ``accumulator.should_update(step)``), else None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    made = m.site_of(test) if isinstance(test, ast.Call) else None
    callee = local_callee(m, made) if made is not None else None
    if callee is None:
        return None
    returns = [n.value for n in value_returns(m, callee)]
    if len(returns) == 1 and any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(returns[0])):
        return returns[0]
    return None


def _named_accum(m: ModuleIndex, test: ast.AST) -> bool:
    """``if is_last:`` where ``is_last = (step + 1) % accum == 0``."""
    name = dotted(test)
    return bool(name) and any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)
                              for b in m.bindings.get(name, ()) for n in ast.walk(b.value))


def _named_count(m: ModuleIndex, test: ast.AST) -> str | None:
    """The count of a flag's accumulation test: ``k`` of ``is_update = step % k == 0`` for ``if is_update:``."""
    name = dotted(test)
    for binding in m.bindings.get(name, ()) if name else ():
        for node in ast.walk(binding.value):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and dotted(node.right):
                return dotted(node.right)
    return None


def _chosen_by_reference(m: ModuleIndex) -> list[tuple[ast.AST, bool]]:
    """``model.no_sync if <test> else nullcontext`` (the method by reference, called by a later ``with ctx():``):
    (test, True when no_sync is the branch taken when the test holds)."""
    found = []
    for node in m.ifexps:
        for branch, when_true in ((node.body, True), (node.orelse, False)):
            if isinstance(branch, ast.Attribute) and branch.attr == "no_sync":
                found.append((node.test, when_true))
    return found


def _skips_exactly_off_the_step(test: ast.AST, skip_when_true: bool, gate: ast.If) -> bool:
    """The choice skips the all-reduce exactly on the micro-steps where the optimizer does not step: its skip
    condition is the step gate's negation (``(i + 1) % k != 0`` against ``if (i + 1) % k == 0: step()``). Another
    condition (``i % k != 0`` against ``(i + 1) % k == 0``: modelscope/FunASR#3472) syncs the wrong micro-step."""
    skip = test if skip_when_true else _negated(test)
    idle = gate.test if _skips_rest(gate) else _negated(gate.test)  # the micro-steps that do not step
    return skip is not None and idle is not None and ast.dump(skip) == ast.dump(idle)


def _negated(test: ast.AST) -> ast.AST | None:
    """``not x`` -> ``x``; ``a == b`` <-> ``a != b``; None when the negation has no simple spelling."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)):
        op = ast.NotEq() if isinstance(test.ops[0], ast.Eq) else ast.Eq()
        return ast.Compare(left=test.left, ops=[op], comparators=test.comparators)
    return None


def _under_chosen_no_sync(m: ModuleIndex, no_sync: list[CallSite]) -> list[CallSite]:
    """Calls in ``with model.no_sync() if not last else nullcontext():`` blocks (a context chosen per micro-step)."""
    found = []
    for node in ast.walk(m.tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                not isinstance(item.context_expr, ast.Call) and any(contains(item.context_expr, s.node) for s in no_sync)
                for item in node.items):
            for stmt in node.body:
                found.extend(m.sites_in(stmt))
    return found


CHECKER = GradAccumWithoutNoSyncChecker()
