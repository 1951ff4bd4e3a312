"""collective-mismatch: a collective (or a function that runs one) called on some ranks only."""

from __future__ import annotations

import ast
import re
import unicodedata
from bisect import bisect_left
from functools import lru_cache
from pathlib import Path

from troubleshooter.scan.callargs import (
    TERMINAL, bindings, literal_choices, module_definitions, path_facts, path_tests, reachable, with_definitions)
from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import (
    callers_of, collective_names, function_arguments, local_callee, value_returns, wrapped_models,
)
from troubleshooter.scan.model import NONZERO, RANK0, CallSite, ModuleIndex, const, dotted, last, walk
from troubleshooter.scan.source import parse_python

try:  # the regular-expression parser (read for the literal text every match of a pattern contains)
    from re import _constants as _re_constants, _parser as _re_parser
except ImportError:  # Python < 3.11
    import sre_constants as _re_constants
    import sre_parse as _re_parser

_OPPOSITE = {RANK0: NONZERO, NONZERO: RANK0}
_ASSIGNMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign)


class CollectiveMismatchChecker(Checker):
    """A collective under a rank-dependent branch with no matching call on the other ranks' side.

    A collective is a ``torch.distributed`` one, or a framework's (``accelerator.wait_for_everyone()``,
    ``accelerator.gather_for_metrics()``: ``framework_collectives``). A call of a local function or
    method that runs one on rank 0's path (directly, or under a branch rank 0 takes) counts too.
    """

    id = "collective-mismatch"

    def check(self, m):
        names = collective_names(m)
        reach = _Reach(self, m, names)
        inner_of: dict[int, str] = {}  # id(call site) -> the collective its callee reaches with its arguments
        candidates = []
        for site in m.calls:
            if not site.ctx.sides:
                continue
            if self._is_collective(m, site, names):
                candidates.append((site, site.method))
            elif _imported_collective_helper(m, site):
                candidates.append((site, f"{site.method}()"))
            else:
                callee = local_callee(m, site)
                if callee is not None and callee is not site.ctx.func:
                    runs_here = reach.of_call(callee, site, {})
                    if runs_here:
                        inner_of[id(site)] = runs_here
                        candidates.append((site, f"{callee.name}()"))
                elif callee is None:
                    for handed in _handed_functions(m, site):  # ``func()`` in ``run_on_main(func)``
                        runs_here = reach.of(handed, {})
                        if runs_here:
                            inner_of[id(site)] = runs_here
                            candidates.append((site, f"{handed.name}()"))
                            break
        candidates += self._rank0_forwards(m)
        yield from self._early_returns(m, names)
        yield from self._nested_rank_exits(m, names, reach)
        yield from self._one_rank_breaks(m, names, reach)
        yield from self._skipped_backwards(m, names)
        yield from self._ragged_collectives(m, names)
        yield from self._clock_conditions(m, names, reach)
        yield from self._collective_reads(m)
        yield from self._handler_collectives(m, names, reach)
        for site, label in candidates:
            if self._balanced(site, label, candidates) or _sharded_arm(m, site):
                continue
            if label.startswith("forward of "):
                yield Hit(site.line, f"the {label} runs on {'rank 0' if site.rank0 else 'some ranks'} only: DDP's "
                                     "forward broadcasts the model's buffers (BatchNorm statistics) from rank 0, a "
                                     "collective the other ranks never join, so it blocks until the timeout; evaluate "
                                     "the unwrapped model (.module) or on every rank",
                          {"variable": label[len("forward of "):]})
                continue
            where = "rank 0 only" if site.rank0 else "some ranks only"
            if label == site.method and _lightning_log(m, site):
                yield Hit(site.line, f"{site.recv}.{site.method}({ast.unparse(site.node.args[0]) if site.node.args else ''}"
                                     f"...) runs on {where} without rank_zero_only=True: Lightning expects every "
                                     "process to log the key (syncing it, and its checkpoint / early-stopping "
                                     "callbacks acting on it), so the others never join and the run hangs; log on "
                                     "every process or pass rank_zero_only=True", {"variable": f"self.{site.method}"})
                continue
            inner = f" (it runs {inner_of[id(site)]})" if id(site) in inner_of else (
                " (by its name a collective helper)" if label.endswith("()") else "")
            yield Hit(site.line, f"{label}{inner} is called on {where}: the other ranks never enter it, so it "
                                 "blocks until the collective times out", {"variable": label})

    def _early_returns(self, m: ModuleIndex, names: set[str]):
        """``if not local_items: return`` before a collective: the condition depends on the rank's own data, so
        the ranks where it holds leave without joining the collective the others wait in."""
        for infos in m.functions.values():
            for info in infos:
                params = {a.arg for a in info.node.args.args} - {"self", "cls"}
                exit_stmt = None
                for stmt in info.node.body:
                    if exit_stmt is None and isinstance(stmt, ast.If) and _data_dependent_exit(m, stmt, params, info):
                        exit_stmt = stmt
                        continue
                    if exit_stmt is None:
                        continue
                    for site in m.sites_in(stmt):
                        if site.ctx.func is info and not site.ctx.sides and self._is_collective(m, site, names):
                            test = f"`{ast.unparse(exit_stmt.test)}` (line {exit_stmt.lineno})"
                            if _given_registry_keys(m, info, exit_stmt):
                                yield Hit(site.line, f"{site.method} runs after an early return on {test}, which "
                                                     "tests the names registered in a module-level registry: every "
                                                     "rank joins as long as every rank registers the same names",
                                          {"variable": site.method}, severity="info")
                            else:
                                yield Hit(site.line, f"{site.method} runs after an early return on {test}, which "
                                                     "depends on this rank's own data: ranks where it holds leave "
                                                     "without joining, the others block until the timeout",
                                          {"variable": site.method})
                            return

    def _nested_rank_exits(self, m: ModuleIndex, names: set[str], reach: "_Reach"):
        """``if rank == 0: merge(); if infer_only: continue`` before a ``dist.barrier()`` every rank runs later in the
        loop body (or ``return`` before one later in the function): the exit sits in a rank arm under a further test,
        so the ranks of that arm may leave while the others wait in the collective they skipped. An arm that ends in
        its exit is a guard (what follows runs on the other side, judged as such); an arm that runs a collective
        itself is left alone (it may balance the one it skips)."""
        scopes = [(info, info.node.body) for infos in m.functions.values() for info in infos if info.name != "<class>"]
        for func, body in [(None, m.tree.body), *scopes]:
            exits = list(_rank_arm_exits(m, body))
            if not exits:
                continue  # no exit in a rank arm (the common case: found before the costlier search below)
            joined = [s for s in (m.calls if func is None else reach.sites.get(id(func), ()))
                      if s.ctx.func is func and not s.ctx.sides and self._runs_collective(m, s, names, reach, func)]
            if not joined:
                continue  # nothing every rank joins in this scope: nothing to skip
            for rank_if, exit_stmt, skipped in exits:
                if any(self._runs_collective(m, s, names, reach, func) for s in m.sites_in(rank_if)):
                    continue
                site = next((s for s in joined if any(s.node in m.nodes_in(stmt) for stmt in skipped)), None)
                if site is None or any(_starts_process_group(m, s, 3) for stmt in skipped for s in m.sites_in(stmt)
                                       if s.line < site.line):
                    continue  # a bail-out before the set-up: the others stop in its rendezvous, a start-up error
                kind = exit_stmt.__class__.__name__.lower()
                yield Hit(site.line, f"{site.method} is skipped by the `{kind}` at line {exit_stmt.lineno}, taken "
                                     f"under `if {ast.unparse(rank_if.test)}:` (line {rank_if.lineno}): the ranks "
                                     "that leave there never enter it, the others block in it until the timeout; "
                                     "run the collective before the exit (or on every path)",
                          {"variable": site.method})
                break

    def _runs_collective(self, m: ModuleIndex, site: CallSite, names: set[str], reach: "_Reach", func) -> bool:
        """``site`` is a collective, or a call of a local function that runs one on rank 0's path."""
        if self._is_collective(m, site, names):
            return True
        callee = local_callee(m, site)
        return callee is not None and callee is not func and bool(reach.of_call(callee, site, {}))

    def _one_rank_breaks(self, m: ModuleIndex, names: set[str], reach: "_Reach"):
        """``if bad_epochs >= patience: break`` out of a training loop on a metric this rank computed alone (a local
        evaluation function with no collective, on a sharded loader, never reduced or broadcast): the rank that
        stops leaves the others in the next gradient all-reduce or barrier."""
        if not m.calls_named(m.P.distributed_samplers):
            return
        runs = None
        for loop in m.loops:
            func = loop.ctx.func
            if func is None or func.name == "<class>" or loop.ctx.sides:
                continue
            if not _steps_within(m, loop.node):
                continue
            for stmt in loop.node.body:
                if not (isinstance(stmt, ast.If) and any(isinstance(b, ast.Break) for b in stmt.body)):
                    continue
                if m.classify(stmt.test) is not None or m.mentions_rank(stmt.test) or _mentions_flag(m, stmt.test):
                    continue
                runs = reach.functions() if runs is None else runs
                source = _local_metric_source(m, func, stmt.test, names, runs)
                if source:
                    line = next(b.lineno for b in stmt.body if isinstance(b, ast.Break))
                    yield Hit(line, f"the training loop stops on `{ast.unparse(stmt.test)}`, which depends on "
                                    f"{source}() computed on this rank's shard alone and never reduced: a rank that "
                                    "stops leaves the others blocked in the next all-reduce or barrier until the "
                                    "timeout; all-reduce the metric (or broadcast the decision) first",
                              {"variable": "break"})

    def _skipped_backwards(self, m: ModuleIndex, names: set[str]):
        """A training loop that ``continue``s past the backward of a DDP-wrapped model on this rank's own data
        (``if torch.isnan(loss): continue``, ``except NoValidAnchorsError: continue`` around the loss): the backward
        is the gradient all-reduce, so the rank that skips it leaves the others waiting in it. Quiet when the
        decision went through a collective first (an all-reduced flag), under ``no_sync``, or on step counters."""
        if not wrapped_models(m):
            return
        for loop in m.loops:
            if loop.ctx.sides:
                continue
            sites = m.sites_in(loop.node)
            if any(s.method == "no_sync" for s in sites):
                continue
            backwards = [s for s in sites if s.method == "backward" and isinstance(s.node.func, ast.Attribute)]
            if not backwards:
                continue
            backward = min(backwards, key=lambda s: (s.line, s.node.col_offset))  # the step's first backward
            body = loop.node.body
            upto = next((i for i, stmt in enumerate(body) if backward.node in m.nodes_in(stmt)), None)
            if upto is None:
                continue  # the backward runs in an inner loop
            data = _batch_names(loop.node)
            for stmt in body[:upto]:
                found = _data_skip(m, stmt, data, names)
                if found is not None:
                    line, why = found
                    yield Hit(line, f"the training loop skips {ast.unparse(backward.node)} ({why}), a decision on "
                                    "this rank's own batch: under DDP the backward is the gradient all-reduce, so the "
                                    "ranks that go on wait in it for the rank that skipped, until the timeout; decide "
                                    "the skip on every rank together (all-reduce a flag) or zero the loss instead",
                              {"variable": "continue"})
                    break
                _learn_data(m, stmt, data, names)

    def _ragged_collectives(self, m: ModuleIndex, names: set[str]):
        """A collective that needs one shape on every rank (``all_gather``, accelerate's ``gather``) given a tensor
        whose length depends on this rank's data (``entropies[mask]``, ``x.nonzero()``, ``masked_select``): the ranks
        enter it with different shapes and it hangs or fails; pad across processes first (or gather objects)."""
        positions = {method: int(index) for method, _, index in (e.partition(":") for e in m.P.shape_bound_collectives)}
        for site in m.calls:
            if site.method not in positions or not self._is_collective(m, site, names):
                continue
            args = site.node.args
            position = positions[site.method] if site.name in names else 0
            if position >= len(args):
                continue
            ragged = _ragged(m, args[position], site)
            if ragged is not None:
                yield Hit(site.line, f"{site.method}({ast.unparse(args[position])}) gets a tensor of a data-dependent "
                                     f"length (`{ragged}`): each rank enters the collective with another shape, so it "
                                     "hangs or fails; pad it across processes to one length first (or gather objects)",
                          {"variable": site.method})

    def _clock_conditions(self, m: ModuleIndex, names: set[str], reach: "_Reach"):
        """A collective (or a local function that runs one) under an ``if`` on this process's own clock
        (``time.time() - last_save >= interval``): each rank takes the test at its own moment, so at some step one rank
        enters the collective while the others go on to the next one, and both block (speechbrain's time-based
        intra-epoch checkpoint ending in a barrier). Quiet when the clock-derived value went through a collective
        (a broadcast or all-reduced decision) in the same function."""
        if not m.P.clock_calls or not any(s.name in m.P.clock_calls for s in m.calls):
            return
        tests_of: dict[int, dict] = {}
        clocks_of: dict[int, set[str]] = {}
        clock_lines = sorted(s.line for s in m.calls if s.name in m.P.clock_calls)
        for site in m.calls:
            func = site.ctx.func
            if func is None or func.name == "<class>" or site.ctx.sides or not site.ctx.optional:
                continue
            if id(func) not in tests_of:  # a function with no test on a clock has no call under one
                clocked = _within(clock_lines, func.node) and any(
                    s.name in m.P.clock_calls for s in m.sites_in(func.node))
                clocks_of[id(func)] = clocks = _clock_names(m, func, names, reach, clock_lines) if clocked else set()
                tested = clocked and any(isinstance(n, (ast.If, ast.IfExp)) and (
                    _on_clock(m, n.test, clocks) or isinstance(n.test, ast.Name)) for n in m.nodes_in(func.node))
                tests_of[id(func)] = path_tests(func.node) if tested else {}
            test = next((t for t, holds in tests_of[id(func)].get(id(site.node), ())
                         if holds and _on_clock(m, t, clocks_of[id(func)]) and not _positivity(t)
                         and not m.mentions_rank(t) and not _mentions_flag(m, t)), None)
            if test is None:
                continue
            if self._is_collective(m, site, names):
                label = site.method
            else:
                callee = local_callee(m, site)
                runs = reach.of_call(callee, site, {}) if callee is not None and callee is not func else None
                if not runs:
                    continue
                label = f"{callee.name}() (it runs {runs})"
            yield Hit(site.line, f"{label} runs only when `{ast.unparse(test)}` holds, a test on this process's own "
                                 "clock: each rank takes it at its own moment, so one rank enters the collective while "
                                 "another goes on to the next one, and both block until the timeout; decide on one "
                                 "rank and broadcast the decision (or test a step count)", {"variable": label})

    def _handler_collectives(self, m: ModuleIndex, names: set[str], reach: "_Reach"):
        """A collective (or a local function that runs one) in an ``except`` handler of a step in a loop (``except
        RuntimeError: torch.cuda.empty_cache(); dist.barrier(); continue``): only the rank whose batch raised runs the
        handler, so it waits in that collective while the others go on to the next step's all-reduce. Quiet when the
        handler re-raises (the run stops anyway), catches an exception every rank raises at the same step
        (``rank_uniform_exceptions``: StopIteration at the end of a shard) or the try body runs the same collective
        (both paths join it)."""
        # the functions holding such a loop themselves (a handler's calls in a function nested in the loop are that
        # function's): found from the index's loops, so a function without one is never walked
        owners = {id(loop.ctx.func) for loop in m.loops if isinstance(loop.node, (ast.For, ast.While))
                  and any(isinstance(node, ast.Try) for node in loop.node.body)}
        if not owners:
            return
        for infos in m.functions.values():
            for info in infos:
                if info.name == "<class>" or id(info) not in owners:
                    continue
                for loop in m.nodes_in(info.node):
                    if not isinstance(loop, (ast.For, ast.While)):
                        continue
                    for node in loop.body:
                        if not isinstance(node, ast.Try):
                            continue
                        tried = {s.method for stmt in node.body for s in m.sites_in(stmt)}
                        for handler in node.handlers:
                            if handler.body and isinstance(handler.body[-1], ast.Raise) or handler.type is not None \
                                    and {last(dotted(n) or "") for n in ast.walk(handler.type)} & m.P.rank_uniform_exceptions:
                                continue
                            for site in (s for stmt in handler.body for s in m.sites_in(stmt)):
                                if site.ctx.func is not info or site.ctx.sides or site.method in tried:
                                    continue
                                label = site.method if self._is_collective(m, site, names) else None
                                callee = local_callee(m, site) if label is None else None
                                runs = reach.of_call(callee, site, {}) if callee is not None and callee is not info \
                                    else None
                                if runs:
                                    label = f"{callee.name}() (it runs {runs})"
                                if label is None:
                                    continue
                                caught = ast.unparse(handler.type) if handler.type is not None else "an exception"
                                yield Hit(site.line, f"{label} runs in the handler of {caught} (line "
                                                     f"{handler.lineno}), which only the rank whose step raised "
                                                     "enters: it waits in that collective while the others go on to "
                                                     "the next step's all-reduce, and both block until the timeout; "
                                                     "record the failure in a flag and reduce it on every rank "
                                                     "after the try", {"variable": label})
                                return

    @staticmethod
    def _collective_reads(m: ModuleIndex):
        """A read of an attribute that runs a collective (``collective_attributes``: Lightning's ``trainer.log_dir``
        broadcasts rank 0's directory) on some ranks only: in a function that runs on rank 0 only (a
        ``@rank_zero_only`` hook, every caller on rank 0) or under a rank test in it."""
        if not m.P.collective_attributes or not any(_may_read(m, rx) for rx in m.P.collective_attributes):
            return
        for infos in m.functions.values():
            for info in infos:
                if info.name == "<class>":
                    continue
                tests = None
                for node in m.nodes_in(info.node):
                    if node.__class__ is not ast.Attribute:
                        continue
                    owner = node.value  # its last name read without joining the chain (most reads do not match)
                    tail = _tail(owner)
                    if tail is None or not m.P.matches("collective_attributes", f"{tail}.{node.attr}") \
                            or not dotted(owner):
                        continue
                    if tests is None:
                        tests = _rank_tests(m, info.node)
                    test = tests.get(id(node))
                    rank0 = info.rank0 or any(m.guards.is_rank0_decorator(d) for d in info.node.decorator_list) or any(
                        site.ctx.sides for site in m.sites_in(info.node) if node in m.nodes_in(site.node))
                    if not rank0 and test is None:
                        continue
                    where = f"under `{ast.unparse(test)}`" if test is not None else f"in {info.name}() on rank 0 only"
                    yield Hit(node.lineno, f"{ast.unparse(node)} is read {where}: reading it runs a collective (it "
                                           "broadcasts rank 0's value), which the other ranks never join, so it "
                                           "blocks until the timeout; read it on every rank first",
                              {"variable": ast.unparse(node)})
                    break

    @staticmethod
    def _rank0_forwards(m: ModuleIndex) -> list[tuple[CallSite, str]]:
        """Calls on some ranks only that run the forward of a DDP-wrapped model with buffers to broadcast (BatchNorm
        statistics, ``register_buffer``):
        ``model(x)`` itself, or a local function the wrapper is passed to and that calls it."""
        wraps = buffered_wraps(m)
        wrapped = set(wraps)
        found = []
        for site in m.calls:
            if not site.ctx.sides:
                continue
            target = dotted(site.node.func)
            if target in wrapped and _after_wrap(site, wraps[target]):
                found.append((site, f"forward of {target}"))
                continue
            callee, bound = function_arguments(m, site)
            for arg, param in bound:
                if dotted(arg) in wrapped and any(
                        s.ctx.func is callee and dotted(s.node.func) == param for s in m.calls):
                    found.append((site, f"forward of {dotted(arg)}"))
                    break
            else:
                handed = _evaluates_imported(m, site, wrapped)
                if handed:
                    found.append((site, f"forward of {handed}"))
        return found

    @staticmethod
    def _is_collective(m: ModuleIndex, site: CallSite, names: set[str]) -> bool:
        if site.name in names or site.name in m.P.framework_collective_functions:
            return True
        if site.recv is None:
            return False
        # the receiver by its name, or by the class it was built from (``v9 = pl.Trainer(...)`` is a trainer)
        spellings = [f"{last(site.recv)}.{site.method}"]
        binding = m.binding(site.recv, site.line, site.ctx.func)
        made = m.site_of(binding.value) if binding is not None and isinstance(binding.value, ast.Call) else None
        if made is not None and made.name:
            spellings.append(f"{last(made.name).lower()}.{site.method}")
        first = _first_unpacked_from(m, site)
        if first is not None and first.name:  # ``engine, opt, _, _ = deepspeed.initialize(...)``: the engine
            spellings.append(f"{first.name}[0].{site.method}")
        lightning = m.memo.get("collective-mismatch.lightning")
        if lightning is None:
            lightning = m.memo["collective-mismatch.lightning"] = any(
                q == "lightning" or q.startswith("lightning.") for q in m.aliases.values())
        return any(m.P.matches("framework_collectives", method) or (
            lightning and m.P.matches("lightning_collectives", method)) or (
            m.P.matches("sharded_engine_collectives", method) and _shows_sharded_engine(m)) for method in spellings) \
            or _synced_object_method(m, site) or _lightning_log(m, site)

    @staticmethod
    def _balanced(site, label, candidates) -> bool:
        arms = {bid: arm for bid, _, arm in site.ctx.sides}
        side = site.ctx.sides[-1][1]
        for other, other_label in candidates:
            if other is site or other_label != label or other.ctx.func is not site.ctx.func:
                continue
            if any(arms.get(bid, arm) != arm for bid, _, arm in other.ctx.sides):
                return True  # the other arm of the same rank test (if / elif / else) calls it too
            if side in _OPPOSITE and other.ctx.sides[-1][1] == _OPPOSITE[side]:
                return True  # rank 0 and the other ranks call it at different places (zero-first)
        return False


def _ragged(m: ModuleIndex, node: ast.AST, site: CallSite) -> str | None:
    """The expression that gives ``node`` a data-dependent length (a boolean-mask subscript, ``nonzero()``...),
    followed through names bound in the same function; None when its length is fixed."""
    for _ in range(3):
        if isinstance(node, ast.Subscript) and _is_mask(m, node.slice, site):
            return ast.unparse(node)
        if isinstance(node, ast.Call) and last(dotted(node.func) or "") in m.P.ragged_tensor_calls:
            return ast.unparse(node)
        name = dotted(node)
        binding = m.binding(name, site.line, site.ctx.func) if name else None
        if binding is None:
            return None
        node = binding.value
    return None


def _is_mask(m: ModuleIndex, index: ast.AST, site: CallSite) -> bool:
    """A boolean mask: a comparison, ``~mask``, ``mask.bool()``, or a name bound to one in the same function."""
    for _ in range(3):
        if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert):
            index = index.operand
        if isinstance(index, ast.Compare) or (isinstance(index, ast.Call) and isinstance(index.func, ast.Attribute)
                                              and index.func.attr == "bool"):
            return True
        name = dotted(index)
        binding = m.binding(name, site.line, site.ctx.func) if name else None
        if binding is None:
            return False
        index = binding.value
    return False


def _batch_names(loop: ast.AST) -> set[str]:
    """The loop's targets that hold data (``batch`` in ``for step, batch in enumerate(loader)``), not its counters nor
    the entries of a mapping the process built (``for name, op_sc in self.optimizer_and_scheduler.items():``: the
    same keys and settings on every rank)."""
    target, it = getattr(loop, "target", None), getattr(loop, "iter", None)
    if target is None or (isinstance(it, ast.Call) and (dotted(it.func) == "range" or isinstance(
            it.func, ast.Attribute) and it.func.attr in ("items", "keys", "values") and not it.args)):
        return set()
    if isinstance(it, ast.Call) and dotted(it.func) == "enumerate" and isinstance(target, ast.Tuple) and target.elts:
        target = ast.Tuple(elts=target.elts[1:])
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _reads(node: ast.AST, data: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in data for n in ast.walk(node))


def _synced(m: ModuleIndex, node: ast.AST, names: set[str]) -> bool:
    """``node`` holds a collective's call (the value was gathered or reduced across ranks)."""
    return any(isinstance(n, ast.Call) and (site := m.site_of(n)) is not None and (
        site.name in names or m.P.matches("framework_collectives", f"{last(site.recv or '')}.{site.method}"))
        for n in ast.walk(node))


def _learn_data(m: ModuleIndex, stmt: ast.stmt, data: set[str], names: set[str]) -> None:
    """Grow ``data`` with the names ``stmt`` binds from it (``loss = model(batch)``); a name handed to a collective
    (``dist.all_reduce(flag)``) leaves it: every rank now holds the same value."""
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if _reads(node.value, data) and not _synced(m, node.value, names):
                data |= bound
            elif isinstance(node, ast.Assign):
                data -= bound
        elif isinstance(node, ast.Call) and _synced(m, node, names):
            data -= {n.id for a in node.args for n in ast.walk(a) if isinstance(n, ast.Name)}


def _data_skip(m: ModuleIndex, stmt: ast.stmt, data: set[str], names: set[str]) -> tuple[int, str] | None:
    """(line, why) of a ``continue`` in ``stmt`` (not in an inner loop) taken on this rank's data: under an ``if`` on
    a name bound from the batch, or in an ``except`` around code reading it."""
    return _continue_on_data(m, stmt, set(data), names)


def _continue_on_data(m: ModuleIndex, node: ast.AST, learned: set[str], names: set[str]) -> tuple[int, str] | None:
    """:func:`_data_skip` for ``node`` and the statements in it, ``learned`` the names bound from the data so far."""
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    if isinstance(node, ast.If):
        test = node.test
        if _reads(test, learned) and not _synced(m, test, names) and m.classify(test) is None \
                and not m.mentions_rank(test) and not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)
                                                          for n in ast.walk(test)):
            hit = next((s for s in node.body if isinstance(s, ast.Continue)), None)
            if hit is not None:
                return hit.lineno, f"`if {ast.unparse(test)}: continue`"
    if isinstance(node, ast.Try):
        reads = any(_reads(s, learned) for s in node.body)
        for handler in node.handlers:
            kind = ast.unparse(handler.type) if handler.type is not None else "Exception"
            hit = next((s for s in handler.body if isinstance(s, ast.Continue)), None)
            if reads and hit is not None and "StopIteration" not in kind:
                return hit.lineno, f"`except {kind}: continue` around code reading the batch"
        for sub in node.body:
            _learn_data(m, sub, learned, names)
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt) or isinstance(child, ast.excepthandler):
            found = _continue_on_data(m, child, learned, names)
            if found is not None:
                return found
    return None


def _rank_arm_exits(m: ModuleIndex, stmts: list[ast.stmt], loop_tail: list[ast.stmt] | None = None,
                    func_tail: tuple = ()):
    """(rank ``if``, exit, statements the exit skips) for every ``continue`` / ``break`` / ``return`` nested in an arm
    of a rank test under a further statement (an arm that ends in its exit is a guard, not counted): a loop exit skips
    the rest of its loop's body (``loop_tail``: what follows the enclosing blocks in it; None outside a loop), a
    ``return`` the rest of the function (``func_tail``). Module-level recursion: a recursive closure would hold the
    index in a reference cycle."""
    func_tail = list(func_tail)
    for i, stmt in enumerate(stmts):
        rest = stmts[i + 1:]
        if isinstance(stmt, ast.If) and m.classify(stmt.test) is not None:
            for arm in (stmt.body, stmt.orelse):
                if not arm or _ends_in_exit(arm):
                    continue
                for found in _exits(m, arm, False):
                    tail = rest + func_tail if isinstance(found, ast.Return) else (
                        rest + loop_tail if loop_tail is not None else [])
                    if tail:
                        yield stmt, found, tail
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            yield from _rank_arm_exits(m, stmt.body, [], rest + func_tail)
            yield from _rank_arm_exits(m, stmt.orelse, None if loop_tail is None else rest + loop_tail, rest + func_tail)
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for block in _blocks(stmt):
                yield from _rank_arm_exits(m, block, None if loop_tail is None else rest + loop_tail, rest + func_tail)


def _exits(m: ModuleIndex, stmts: list[ast.stmt], in_loop: bool):
    """The ``return`` statements in ``stmts``, and the ``continue`` / ``break`` ones outside their inner loops (none
    when ``in_loop``: they belong to that loop); not in nested definitions nor in code switched off (``if False``,
    ``if callbacks.stop_training:`` with a flag nothing raises)."""
    for stmt in stmts:
        if isinstance(stmt, (ast.Return, ast.Continue, ast.Break)):
            if isinstance(stmt, ast.Return) or not in_loop:
                yield stmt
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            yield from _exits(m, stmt.body, True)  # its continue / break stay in it; a return leaves the function
            yield from _exits(m, stmt.orelse, in_loop)
        elif isinstance(stmt, ast.If) and (_never(stmt.test) or _flag_never_raised(m, stmt.test)):
            yield from _exits(m, stmt.orelse, in_loop)
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for block in _blocks(stmt):
                yield from _exits(m, block, in_loop)


def _never(test: ast.AST) -> bool:
    """A test that is always false: ``False``, ``0``, ``False and ...``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_never(v) for v in test.values)
    value = const(test, default=...)
    return value is not ... and not value


def _flag_never_raised(m: ModuleIndex, test: ast.AST) -> bool:
    """``if callbacks.stop_training:`` where every assignment of that attribute, in the module and in the local
    modules it imports (the class that holds the flag: yolov5/yolov9's ``Callbacks.__init__`` sets
    ``self.stop_training = False``), stores a false literal, and nothing sets it by name: no run raises the flag, so
    the arm is code switched off."""
    if not isinstance(test, ast.Attribute):
        return False
    known = m.memo.setdefault("lowered_flags", {})
    if test.attr not in known:
        known[test.attr] = _never_raised(m, test.attr)
    return known[test.attr]


def _never_raised(m: ModuleIndex, attr: str) -> bool:
    """Every assignment of attribute ``attr``, in the module and the local modules it imports, stores a false
    literal, and nothing sets it by name (``setattr(obj, "attr", ...)``). Only files whose text holds the name are
    read (each once per scan)."""
    summaries = []
    if attr in m.text:
        own = m.memo.get("attribute_stores")
        if own is None:
            own = m.memo["attribute_stores"] = _attribute_stores(
                node for kind in (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call) for node in m.nodes_of(kind))
        summaries.append(own)
    if m.project is not None:
        memo = m.project.module_memo
        for path in _imported_local_paths(m):
            if ("attribute_stores", path) not in memo:
                memo["attribute_stores", path] = _read_text(path)
            found = memo["attribute_stores", path]
            if isinstance(found, str):  # the file's text, not summarised yet
                if attr not in found:
                    continue
                tree = _parsed_module(path)
                found = memo["attribute_stores", path] = None if tree is None else _attribute_stores(ast.walk(tree))
            summaries.append(found)
    values = [summary[attr] for summary in summaries if summary and attr in summary]
    return bool(values) and all(values)


def _attribute_stores(nodes) -> dict[str, bool]:
    """Attribute name -> True when every assignment of it among a module's ``nodes`` stores a false literal
    (``False``, ``None``, ``0``), False when one stores anything else or ``setattr`` names it."""
    stores: dict[str, bool] = {}
    for node in nodes:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
        for target in targets:
            if isinstance(target, ast.Attribute):
                false = node.value is not None and const(node.value, default=True) in (False, None, 0)
                stores[target.attr] = stores.get(target.attr, True) and false
        if isinstance(node, ast.Call) and dotted(node.func) == "setattr":
            for arg in node.args[1:2]:
                name = const(arg, default=None)
                if isinstance(name, str):
                    stores[name] = False
    return stores


def _imported_local_paths(m: ModuleIndex) -> list[str]:
    """The files of the local modules the scanned module imports from (``from utils.callbacks import Callbacks``)."""
    modules = {q.rpartition(".")[0] for q in m.aliases.values()} | set(m.aliases.values())
    paths = {m.project.files.find(m.path, module, 0) for module in modules if module}
    return sorted(p for p in paths if p)


def _read_text(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _parsed_module(path: str) -> ast.Module | None:
    try:
        return parse_python(Path(path).read_bytes(), path)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _starts_process_group(m: ModuleIndex, site: CallSite, depth: int) -> bool:
    """``site`` starts torch.distributed: ``init_process_group`` itself, a local function that calls it (through
    ``depth`` levels of local calls), or a function of the project's helper modules named for it
    (``process_group_starter_names``: ``init_distributed_device(args)`` imported from ``distributed.py``)."""
    if site.name in m.P.init_process_group:
        return True
    callee = local_callee(m, site) if depth else None
    if callee is None and m.P.matches("process_group_starter_names", site.method):
        return True
    return callee is not None and any(
        s.ctx.func is callee and _starts_process_group(m, s, depth - 1) for s in m.sites_in(callee.node))


def _ends_in_exit(arm: list[ast.stmt]) -> bool:
    """The arm's last statement leaves (``return`` / ``raise`` / ``continue`` / ``break`` / ``exit()``): a guard."""
    end = arm[-1]
    return isinstance(end, TERMINAL) or (isinstance(end, ast.Expr) and isinstance(end.value, ast.Call)
                                         and last(dotted(end.value.func) or "") in ("exit", "_exit"))


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested in a compound statement (``if``/``with``/``try``/``match``; loops apart)."""
    found = [getattr(stmt, name) for name in ("body", "orelse", "finalbody") if getattr(stmt, name, None)]
    found += [h.body for h in getattr(stmt, "handlers", ())] + [c.body for c in getattr(stmt, "cases", ())]
    return found


def _handed_functions(m: ModuleIndex, site: CallSite) -> list:
    """The local functions a call of a parameter may run: ``func(...)`` inside ``def run_on_main(func)`` runs what
    the callers hand in (``run_on_main(self.save)``, ``run_on_main(func=save)``)."""
    helper = site.ctx.func
    if site.recv is not None or not isinstance(site.node.func, ast.Name) or helper is None or helper.name == "<class>":
        return []
    params = [a.arg for a in helper.node.args.args]
    if site.method not in params:
        return []
    position = params.index(site.method) - (1 if params[:1] in (["self"], ["cls"]) else 0)
    found = []
    for call in m.calls:
        if call.method != helper.name or local_callee(m, call) is not helper:
            continue
        args = [k.value for k in call.node.keywords if k.arg == site.method]
        if not args and 0 <= position < len(call.node.args):
            args = [call.node.args[position]]
        for arg in args:
            text = dotted(arg)
            infos = m.functions.get(last(text), ()) if text and (text.count(".") == 0 or (
                text.count(".") == 1 and text.startswith("self."))) else ()
            found += list(infos) if len(infos) == 1 else []
    return found


def _first_unpacked_from(m: ModuleIndex, site: CallSite) -> CallSite | None:
    """The call whose result's first element the receiver holds (``engine, optimizer, _, _ = deepspeed.initialize(...)``,
    ``engine = deepspeed.initialize(...)[0]``;
    an attribute such as ``self.deepspeed`` may be unpacked in another method of the class)."""
    recv, func = site.recv, site.ctx.func
    binding = m.binding(recv, site.line, func)
    if binding is None and recv.startswith("self.") and func is not None and func.cls is not None:
        binding = next((b for b in m.bindings.get(recv, ()) if b.func is not None and b.func.cls == func.cls), None)
    if binding is not None and isinstance(binding.value, ast.Subscript) and isinstance(binding.value.value, ast.Call) \
            and const(binding.value.slice) == 0:  # ``engine = deepspeed.initialize(...)[0]``
        return m.site_of(binding.value.value)
    unpacking = m.memo.get("collective-mismatch.unpacking")
    if unpacking is None:  # asked per call with a receiver: the few calls unpacked into names, listed once
        unpacking = m.memo["collective-mismatch.unpacking"] = [made for made in m.calls if made.unpacked_to]
    for made in unpacking:
        if made.unpacked_to[0] == recv and (
                made.ctx.func is func or (recv.startswith("self.") and made.ctx.func is not None and func is not None
                                          and made.ctx.func.cls is not None and made.ctx.func.cls == func.cls)):
            return made
    return None


def _clock_names(m: ModuleIndex, func, names: set[str], reach: "_Reach", clock_lines: list[int]) -> set[str]:
    """Names (and ``self.`` attributes) of ``func`` bound to a clock reading or to an expression over one
    (``last = time.time()``, ``elapsed = time.time() - start``), minus those handed to a collective, to a helper that
    runs one or is named for one (``sync_flag(elapsed > limit)``): the decision was synchronised. ``clock_lines``: the
    lines of the module's clock calls (an assignment holding none of them reads a clock only through a name found;
    not asked of one inlined from a helper, whose substituted arguments may sit on another line than its own)."""
    def syncs(s: CallSite) -> bool:
        if s.name in names or _imported_collective_helper(m, s) or m.P.matches("collective_helper_names", s.method):
            return True
        callee = local_callee(m, s)
        return callee is not None and callee is not func and bool(reach.of(callee, {}))

    synced = None  # found when a first name is bound to a clock (most functions bind none)
    inlined = _inlined_lines(m)
    found: set[str] = set()
    assignments = [node for node in m.nodes_in(func.node) if node.__class__ in _ASSIGNMENTS and node.value is not None]
    for _ in range(3):
        before = len(found)
        for node in assignments:
            if (found or node.lineno in inlined or _within(clock_lines, node)) and _on_clock(m, node.value, found):
                if synced is None:
                    synced = {dotted(n) for s in reach.sites.get(id(func), ()) if s.node.args and syncs(s)
                              for a in s.node.args for n in ast.walk(a) if dotted(n)}
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found |= {dotted(t) for t in targets if dotted(t)} - synced
        if len(found) == before:  # a pass that found nothing new: the next one would not either
            break
    return found


def _positivity(test: ast.AST) -> bool:
    """``elapsed > 0`` / ``dt >= 0.0``: a guard against dividing by a zero duration, true on every rank."""
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Gt, ast.GtE)) \
        and const(test.comparators[0]) in (0, 0.0)


def _on_clock(m: ModuleIndex, test: ast.AST, clock_names: set[str]) -> bool:
    """``test`` reads a clock call or a name bound from one."""
    for node in walk(test, operators=False):
        if isinstance(node, ast.Call) and m.qual(node.func) in m.P.clock_calls:
            return True
        if isinstance(node, (ast.Name, ast.Attribute)) and dotted(node) in clock_names:
            return True
    return False


def _synced_object_method(m: ModuleIndex, site: CallSite) -> bool:
    """``metric.compute()`` on an object a library builds that syncs its state across processes in that method
    (``synced_object_methods``: ``"torchmetrics.:compute"``): the receiver is bound to a call into the package."""
    wanted = [prefix for prefix, _, method in (e.partition(":") for e in m.P.synced_object_methods)
              if method == site.method]
    if not wanted:
        return False
    found = False
    for binding in m.bindings.get(site.recv, ()):
        value = binding.value
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(
                value.func.value, ast.Call):  # ``torchmetrics.Accuracy(...).to(device)``
            value = value.func.value
        made = m.site_of(value) if isinstance(value, ast.Call) else None
        if made is not None and any(made.name.startswith(prefix) for prefix in wanted):
            found = True
        elif made is not None and made.name in m.P.ddp_wrappers:
            return False  # ``model = FSDP(...)`` on one path, ``DDP(model)`` on another: which one runs is configuration
    return found


def _sharded_arm(m: ModuleIndex, site: CallSite) -> bool:
    """A sharded-engine save under a rank test that also admits every rank of a sharded run (diffusers' fix:
    ``if accelerator.distributed_type == DistributedType.DEEPSPEED or accelerator.is_main_process:``)."""
    if not (site.recv and m.P.matches("sharded_engine_collectives", f"{last(site.recv)}.{site.method}")):
        return False
    test = _rank_tests(m, site.ctx.func.node if site.ctx.func is not None else m.tree).get(id(site.node))
    markers = m.P.sharded_engine_markers
    return test is not None and any((isinstance(n, ast.Attribute) and n.attr in markers) or (
        isinstance(n, ast.Name) and n.id in markers) for n in walk(test))


def _shows_sharded_engine(m: ModuleIndex) -> bool:
    """The file shows DeepSpeed or FSDP behind its framework (``sharded_engine_markers``: ``deepspeed_plugin``,
    ``DistributedType.DEEPSPEED``, an imported ``deepspeed``), so its save_state / load_state shard and synchronise."""
    memo = m.memo.get("sharded_engine")
    if memo is None:
        markers = m.P.sharded_engine_markers
        memo = m.memo["sharded_engine"] = any(q.partition(".")[0] in markers for q in m.aliases.values()) or any(
            (isinstance(n, ast.Attribute) and n.attr in markers) or (isinstance(n, ast.Name) and n.id in markers)
            for n in walk(m.tree))
    return memo


def _evaluates_imported(m: ModuleIndex, site: CallSite, wrapped: set[str]) -> str | None:
    """The wrapped model handed to an evaluation function of the project's own modules (``evaluation_functions``:
    ``engine.evaluate(model, loader, device)``, ``from utils import validate``): it runs the model's forward. None
    for a local function (judged by its body) or one of another package."""
    if "." not in (site.name or "") or local_callee(m, site) is not None or not m.P.matches(
            "evaluation_functions", site.method):
        return None
    module = site.name.rpartition(".")[0]
    local = m.project.local_modules if m.project is not None else set()
    if module not in local:
        return None
    return next((dotted(a) for a in [*site.node.args, *(k.value for k in site.node.keywords)] if dotted(a) in wrapped),
                None)


def buffered_wraps(m: ModuleIndex) -> dict[str, CallSite]:
    """Names bound to a DDP-wrapped model whose forward broadcasts buffers -> the wrap: the file builds BatchNorm
    layers (or a model factory that has them, or registers buffers) and the wrap keeps ``broadcast_buffers``."""
    if not (m.calls_named(m.P.batchnorm_layers) or any(
            m.P.matches("batchnorm_model_factories", c.name) or c.method in m.P.buffer_registrars for c in m.calls)):
        return {}
    return {name: wrap for name, wrap in wrapped_models(m).items()
            if const(wrap.kw("broadcast_buffers"), default=True) is not False}


def _after_wrap(site: CallSite, wrap: CallSite) -> bool:
    """False for a call of the bare model before the wrap that rebinds its name in the same function (a rank-0
    forward that writes reference tensors before ``model = DDP(model)``)."""
    return site.ctx.func is not wrap.ctx.func or site.line > wrap.line or site.ctx.loops


class _Reach:
    """Which collective a call of a local function or method runs on rank 0's path (directly, or through the
    local functions it calls), given the literal arguments of that call (``callargs``): a call of
    ``load(args, evaluate=True)`` does not reach a barrier under ``if ... and not evaluate:``."""

    DEPTH = 5

    def __init__(self, checker: CollectiveMismatchChecker, m: ModuleIndex, names: set[str]):
        self.checker, self.m, self.names = checker, m, names
        self.sites: dict[int, list[CallSite]] = {}  # id(function) -> the calls of its own body
        for site in m.calls:
            func = site.ctx.func
            if func is not None and func.name != "<class>":
                self.sites.setdefault(id(func), []).append(site)
        self.memo: dict[tuple, str | None] = {}
        self.tests: dict[int, dict] = {}
        self.defined = module_definitions(m.tree)
        self.choices: dict[int, dict] = {}  # id(function) -> its local names that only hold literals
        self.forwards = buffered_wraps(m)  # a DDP forward that broadcasts buffers is a collective too

    def functions(self) -> dict[str, str]:
        """Local function/method name -> the collective it runs on rank 0's path, its parameters unknown."""
        return {info.name: found for infos in self.m.functions.values() for info in infos
                if (found := self.of(info, {}))}

    def of_call(self, callee, site: CallSite, bound: dict, depth: int = 0) -> str | None:
        """What ``site`` (a call of ``callee``, its caller's parameters bound to ``bound``) reaches, with any of the
        values its arguments can hold."""
        caller = site.ctx.func
        choices = None
        if caller is not None and caller.name != "<class>":
            choices = self.choices.get(id(caller))
            if choices is None:
                choices = self.choices[id(caller)] = literal_choices(caller.node)
            if id(caller) not in self.tests:
                self.tests[id(caller)] = path_tests(caller.node)
            facts = path_facts(self.tests[id(caller)].get(id(site.node), ()))
            bound = {**facts, **bound} if facts else bound
        for variant in bindings(callee.node, site.node, bound, is_method=callee.cls is not None, choices=choices):
            found = self.of(callee, variant, depth)
            if found:
                return found
        return None

    def of(self, info, bound: dict, depth: int = 0) -> str | None:
        """The collective (``"barrier at line 12"`` / ``"helper() at line 30"``) a call of ``info`` with these
        parameter bindings reaches on rank 0's path, else None."""
        key = (id(info), repr(sorted(bound.items(), key=lambda kv: kv[0])))
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = None  # a recursive call of itself adds nothing
        found = None
        known = None
        for site in self.sites.get(id(info), ()):
            if any(side != RANK0 for _, side, _ in site.ctx.sides):
                continue  # rank 0 does not get there
            if known is None:
                known = with_definitions(info.node, bound, self.defined)
                if id(info) not in self.tests:
                    self.tests[id(info)] = path_tests(info.node)
            if not reachable(self.tests[id(info)].get(id(site.node), ()), known):
                continue  # a test on a parameter this call binds (or a module name) goes the other way
            if self.checker._is_collective(self.m, site, self.names):
                found = f"{site.method} at line {site.line}"
                break
            wrap = self.forwards.get(dotted(site.node.func))
            if wrap is not None and _after_wrap(site, wrap):
                found = (f"the forward of the DDP-wrapped {dotted(site.node.func)} at line {site.line}, which "
                         "broadcasts its BatchNorm buffers")
                break
            callee = local_callee(self.m, site)
            if callee is None or callee is info or depth >= self.DEPTH:
                continue
            if self.of_call(callee, site, bound, depth + 1):
                found = f"{callee.name}() at line {site.line}"
                break
        self.memo[key] = found
        return found


def _within(lines: list[int], definition: ast.AST) -> bool:
    """Some of ``lines`` (sorted) lies within the definition, its decorators included: every node inside it does, so
    when none does, a walk of the definition would find none of them (True when its extent is unknown)."""
    end = getattr(definition, "end_lineno", None)
    if end is None:
        return True
    start = min([definition.lineno, *(d.lineno for d in getattr(definition, "decorator_list", ()))])
    at = bisect_left(lines, start)
    return at < len(lines) and lines[at] <= end


def _inlined_lines(m: ModuleIndex) -> set[int]:
    """The lines of the statements inlined from helpers (a node in one lies within the statement's lines, not always
    within its own), once per module."""
    found = m.memo.get("inlined_lines")
    if found is None:
        found = m.memo["inlined_lines"] = {line for stmt in m.inlined
                                           for line in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)}
    return found


def _may_read(m: ModuleIndex, pattern: re.Pattern) -> bool:
    """The module may hold an attribute read ``owner.attr`` that ``pattern`` matches (``collective_attributes``): every
    dot-separated piece of the literal text each match contains is spelled in the module's text (an owner's last name
    and the attribute are identifiers of the source, compared as Python normalises them), or a statement inlined
    from a helper holds a match. True when the pattern has no such literal."""
    literal = _required_literal(pattern)
    if not literal:
        return True
    text = m.text if m.text.isascii() else unicodedata.normalize("NFKC", m.text)
    if all(piece in text for piece in literal.split(".")):
        return True
    return any(node.__class__ is ast.Attribute and pattern.search(f"{_tail(node.value)}.{node.attr}")
               for stmt in m.inlined for node in walk(stmt, operators=False))


def _tail(owner: ast.AST) -> str | None:
    """The last name of an attribute's owner (``trainer`` of ``self.trainer``), None for another expression."""
    return owner.id if owner.__class__ is ast.Name else owner.attr if owner.__class__ is ast.Attribute else None


@lru_cache(maxsize=64)
def _required_literal(pattern: re.Pattern) -> str:
    """The longest run of literal characters in the top-level sequence of ``pattern`` (every match contains it:
    ``trainer.log_dir`` of ``^\\w*trainer\\.log_dir$``); "" when there is none or the case is folded."""
    if pattern.flags & re.IGNORECASE:
        return ""
    try:
        items = list(_re_parser.parse(pattern.pattern, pattern.flags))
    except (re.error, TypeError, ValueError):
        return ""
    runs, run = [], ""
    for op, arg in items:
        if op is _re_constants.LITERAL:
            run += chr(arg)
        else:
            runs.append(run)
            run = ""
    return max([*runs, run], key=len)


def _rank_tests(m: ModuleIndex, func: ast.AST) -> dict[int, ast.AST]:
    """id(node) -> the innermost rank test (``if trainer.is_global_zero:``) whose arm holds the node, in ``func``."""
    found: dict[int, ast.AST] = {}
    for node in m.nodes_in(func):
        if isinstance(node, ast.If) and m.classify(node.test) is not None:
            for stmt in [*node.body, *node.orelse]:
                for inner in m.nodes_in(stmt):
                    found[id(inner)] = node.test
    return found


def _lightning_log(m: ModuleIndex, site: CallSite) -> bool:
    """``self.log(...)`` / ``self.log_dict(...)`` in a method of a Lightning class (``pl_module.log`` in a callback)
    without ``rank_zero_only=True``, synced (``sync_dist=True``) or in a hook whose metrics callbacks monitor
    (``lightning_metric_hooks``): every process must log the key (``lightning_log_calls``)."""
    if not m.P.matches("lightning_log_calls", f"{last(site.recv)}.{site.method}"):
        return False
    if const(site.kw("rank_zero_only"), default=False) is True:
        return False
    func = site.ctx.func
    if func is None or func.cls is None or not _lightning_class(m, func.cls, 3):
        return False
    return const(site.kw("sync_dist"), default=False) is True or m.P.matches("lightning_metric_hooks", func.name)


def _lightning_class(m: ModuleIndex, name: str, depth: int) -> bool:
    """Class ``name`` of this file derives from a class of Lightning (``pl.LightningModule``, ``Callback``), directly
    or through classes of this file."""
    cls = m.classes.get(name)
    if cls is None or depth == 0:
        return False
    for base in cls.bases:
        qual = m.qual(base)
        if qual.partition(".")[0] in ("lightning", "pytorch_lightning", "lightning_fabric"):
            return True
        if isinstance(base, ast.Name) and base.id != name and _lightning_class(m, base.id, depth - 1):
            return True
    return False


def _imported_collective_helper(m: ModuleIndex, site: CallSite) -> bool:
    """A function imported from the project's helper modules whose name says it runs a collective
    (``utils.reduce_dict(...)``, ``comm.synchronize()``); not one of torch / numpy (``torch.cuda.synchronize``)."""
    if "." not in site.name or not m.P.matches("collective_helper_names", site.method):
        return False  # the name first (remembered per name): most calls are not named for a collective
    if local_callee(m, site) is not None or site.name in collective_names(m):
        return False
    root = site.name.partition(".")[0]
    return root not in m.P.collective_helper_skip_packages and root in {q.partition(".")[0] for q in m.aliases.values()}


def _data_dependent_exit(m: ModuleIndex, stmt: ast.If, params: set[str], func) -> bool:
    """``if not items: return`` / ``if len(items) == 0: return``: an exit on the emptiness of a parameter (not a
    rank, not "distributed or not", not ``is None``), also through a flag bound to that test."""
    body = stmt.body
    if stmt.orelse or not body or not isinstance(body[-1], ast.Return):
        return False
    test = m.flag_test(stmt.test, stmt.lineno, func) or stmt.test
    if m.classify(test) is not None or m.mentions_rank(test) or _mentions_flag(m, test):
        return False
    test = test.value if isinstance(test, ast.NamedExpr) else test  # ``if (empty := not items): return``
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return dotted(test.operand) in params
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.LtE, ast.Lt)):
        left = test.left
        return (isinstance(left, ast.Call) and dotted(left.func) == "len" and len(left.args) == 1
                and dotted(left.args[0]) in params and const(test.comparators[0]) in (0, 1))
    return False


def _given_registry_keys(m: ModuleIndex, func, exit_stmt: ast.If) -> bool:
    """Every call of ``func`` passes, for the parameter the early return tests, the keys of a module-level registry
    (``_sync(self.names())`` where ``names()`` returns ``[n for n in _counters if ...]`` and ``_counters = dict()``
    at module level): the test asks whether any name was registered in the process, not whether this rank holds
    data, and names are registered by the code every rank runs. The scan cannot tell a registration made on one rank
    only, so the exit is advice there (``info``), not a hang."""
    tested = {dotted(n) for n in ast.walk(exit_stmt.test) if isinstance(n, ast.Name)}
    params = [a.arg for a in func.node.args.args]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    positions = [i for i, p in enumerate(params) if p in tested]
    callers = callers_of(m, func)
    if len(positions) != 1 or not callers:
        return False
    for call in callers:
        given = call.arg(positions[0], params[positions[0]])
        made = m.site_of(given) if isinstance(given, ast.Call) else None
        source = local_callee(m, made) if made is not None else None
        if source is None or m.mentions_rank(given) or not _returns_registry_keys(m, source):
            return False
    return True


def _returns_registry_keys(m: ModuleIndex, func) -> bool:
    """Every return of ``func`` lists the keys of a module-level dict: ``[k for k in REGISTRY if ...]``,
    ``list(REGISTRY)``, ``sorted(REGISTRY.keys())``."""
    registries = {t.id for stmt in m.tree.body if isinstance(stmt, ast.Assign) for t in stmt.targets
                  if isinstance(t, ast.Name) and (isinstance(stmt.value, ast.Dict) or isinstance(stmt.value, ast.Call)
                                                  and dotted(stmt.value.func) in ("dict", "collections.OrderedDict",
                                                                                  "OrderedDict"))}

    def over_registry(node: ast.AST) -> bool:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "keys":
            node = node.func.value
        return isinstance(node, ast.Name) and node.id in registries

    returns = [n.value for n in value_returns(m, func)]
    for value in returns:
        if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            ok = len(value.generators) == 1 and over_registry(value.generators[0].iter)
        elif isinstance(value, ast.Call) and dotted(value.func) in ("list", "sorted", "set", "tuple"):
            ok = len(value.args) == 1 and over_registry(value.args[0])
        else:
            ok = False
        if not ok:
            return False
    return bool(returns)


def _local_metric_source(m: ModuleIndex, func, test: ast.AST, names: set[str], runs: dict[str, str]) -> str | None:
    """The local function whose result ``test`` depends on (through assignments in ``func``, and the tests that
    guard them), when that dependency meets no collective or reduce/gather/broadcast/rank helper; else None."""
    deps: dict[str, set[str]] = {}
    calls: dict[str, set[str]] = {}

    def record(targets, value: ast.AST, guards: tuple) -> None:
        for target in targets:
            if isinstance(target, (ast.Tuple, ast.List)):
                parts = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(
                    target.elts) else [value] * len(target.elts)
                for part_target, part_value in zip(target.elts, parts):
                    record([part_target], part_value, guards)
                continue
            name = dotted(target)
            if not name:
                continue
            for node in [value, *guards]:
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Call):
                        calls.setdefault(name, set()).add(dotted(sub.func) or "")
                    elif isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, ast.Load):
                        deps.setdefault(name, set()).add(dotted(sub) or "")

    def visit(stmts, guards: tuple) -> None:
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.Assign):
                record(stmt.targets, stmt.value, guards)
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
                record([stmt.target], stmt.value, guards)
            elif isinstance(stmt, ast.If):
                visit(stmt.body, guards + (stmt.test,))
                visit(stmt.orelse, guards + (stmt.test,))
            elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
                for block in ("body", "orelse", "finalbody"):
                    visit(getattr(stmt, block, []), guards)
                for handler in getattr(stmt, "handlers", []):
                    visit(handler.body, guards)

    visit(func.node.body, ())
    record([ast.Name("<test>")], test, ())  # calls in the test itself: ``if stopper.should_stop(evaluate(...)):``
    seen: set[str] = set()
    todo = ["<test>"]
    source = None
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for called in calls.get(name, ()):
            callee = last(called)
            if called in names or any(w in callee.lower() for w in ("reduce", "gather", "broadcast", "sync", "rank")):
                return None
            if callee in m.functions and not called.startswith(("torch.", "np.", "math.")):
                if callee in runs:
                    return None
                if not _builds_loader(m, callee):  # a loader's length is the same on every rank: not a metric
                    source = source or callee
        todo += deps.get(name, ())
    if source is None:
        return None
    for site in m.calls:  # the metric is reduced or broadcast somewhere in the function
        if site.ctx.func is func and site.name in names and any(
                dotted(n) in seen for a in site.node.args for n in ast.walk(a)):
            return None
    return source


def _steps_within(m: ModuleIndex, loop: ast.AST) -> bool:
    """The loop (at any depth) steps an optimizer or runs a backward, directly or through a local function or method
    it calls (``for epoch in ...: self.fit_batch(batch)`` / ``train_one_epoch(...)`` whose body steps)."""
    def steps(site: CallSite) -> bool:
        return m.P.matches("training_step_calls", f"{last(site.recv)}.{site.method}" if site.recv else site.method)

    sites = m.sites_in(loop)
    if any(steps(s) for s in sites):
        return True
    for site in sites:
        callee = local_callee(m, site)
        if callee is not None and any(steps(s) for s in m.sites_in(callee.node)):
            return True
    return False


def _builds_loader(m: ModuleIndex, name: str) -> bool:
    """Every definition of local function ``name`` returns a DataLoader it builds (``get_train_dataloader``)."""
    returns = [n.value for info in m.functions[name] for n in value_returns(m, info)]
    return bool(returns) and all(isinstance(v, ast.Call) and m.qual(v.func) in m.P.dataloaders for v in returns)


def _mentions_flag(m: ModuleIndex, node: ast.AST) -> bool:
    return any(any(w in (dotted(n) or "").lower() for w in m.P.distributed_flag_words)
               for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute)))


CHECKER = CollectiveMismatchChecker()
