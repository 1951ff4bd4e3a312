"""logging-from-all-ranks: per-step printing, experiment tracking or checkpoint writing on every rank."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import (
    contains, derivation, function_arguments, launcher_absent_when, local_callee,
)
from troubleshooter.scan.checkers._switches import switch_value
from troubleshooter.scan.model import const, dotted, last, walk


class LoggingFromAllRanksChecker(Checker):
    """Unguarded wandb/TensorBoard/torch.save anywhere (warnings), and print/logger calls inside the training loop
    (info: repeated console lines do not break or corrupt a run)."""

    id = "logging-from-all-ranks"

    def check(self, m):
        P = m.P
        silenced = bool(m.calls_to(P.print_silencers)) or any(
            last(name) == "print" and name != "print" for name in m.bindings) or (
            m.project is not None and m.project.print_silenced)
        levels_by_rank = (m.project is not None and m.project.logging_by_rank) or any(
            s.method in P.log_level_setters and (s.rank_conditional or m.mentions_rank(s.node)) for s in m.calls)
        loggers = self._loggers(m)
        switched_off = None  # packages whose trackers the environment turns off by rank (computed when needed)
        callbacks = self._registered_callbacks(m)
        for site in m.calls:
            if site.rank0 or (site.func and site.func.name in callbacks):
                continue
            what, severity = None, None  # trackers and shared-file writes corrupt results: the finding's severity
            if site.name in P.tracker_calls:
                if site.name == "wandb.init" and site.kw("group") is not None:
                    continue
                if site.name in P.run_bound_tracker_calls and self._run_judged_elsewhere(m, site):
                    continue
                if site.name in P.event_file_writers and not self._written_on_every_rank(m, site):
                    continue
                if switched_off is None:
                    switched_off = _switched_off_by_rank(m)
                if site.name.partition(".")[0] in switched_off:
                    continue
                what = f"{site.name}() runs on every rank: one run/event file per rank, duplicated or clashing metrics"
                if _off_by_default(m, site):
                    what = f"{what} (once tracking is switched on: it is off by default here)"
                    severity = "info"  # the default run starts no tracker; the scan cannot see how it is run
            elif site.name in P.checkpoint_writers or site.method in P.checkpoint_writers and site.recv:
                if site.kw("is_main_process") is not None or self._per_item_output(m, site) or m.rank0_first(site) \
                        or self._private_target(m, site) or _in_one_process_arm(m, site) or _per_sample(m, site):
                    continue  # rank 0 first, the others after it: one writer at a time; or a private buffer
                if site.func and site.func.name in P.checkpoint_writers:
                    continue  # inside the project's own save_pretrained: judged where that is called
                what = (f"{site.name or site.method}() writes the checkpoint from every rank at once: concurrent "
                        "writes to one file can leave it torn")
            elif (site.name in P.print_calls and not silenced or site.recv in loggers
                  and site.method in P.logging_methods and not levels_by_rank) and self._in_training_loop(m, site):
                if self._on_error_path(m, site):
                    continue  # a report of this rank's own event (a skipped or aborted step), not a per-step line
                severity = "info"  # duplicated console lines: noise, not a broken or corrupted run
                what = ("print() inside the training loop runs on every rank: each line is repeated once per rank"
                        if site.name in P.print_calls and not silenced else
                        f"{site.recv}.{site.method}() inside the loop runs on every rank: each line is repeated "
                        "per rank")
            if what and not m.mentions_rank(site.node):
                name = site.name or f"{site.recv}.{site.method}"
                yield Hit(site.line, f"{what}; guard it with `if rank == 0:`", {"variable": name}, severity=severity)

    @staticmethod
    def _in_training_loop(m, site) -> bool:
        """The innermost loop around the call steps an optimizer (a per-step line, not a per-epoch one)."""
        return bool(site.ctx.loops) and m.is_training_loop(site.ctx.loops[-1])

    @staticmethod
    def _written_on_every_rank(m, site) -> bool:
        """``writer = SummaryWriter(...)`` on every rank opens only this process's own event file (named by host,
        process id and time): nothing clashes unless the ranks write to it. True when a write (``writer.add_*``)
        runs on every rank, through the name the writer is bound to or the parameter of a local function it is
        handed to; a writer whose writes cannot be followed (kept in a dict, handed to another module) is no
        evidence."""
        name = site.assigned_to
        if not name:
            return False
        receivers: set[tuple[str, object]] = {(name, None)}  # (receiver, the function it is read in; None: any)
        for s in m.calls:
            callee, pairs = function_arguments(m, s)
            receivers.update((param, callee) for arg, param in pairs if dotted(arg) == name)
        writes = [s for s in m.calls if s.method.startswith("add_") and any(
            s.recv == receiver and (scope is None or s.ctx.func is scope) for receiver, scope in receivers)]
        return any(not (s.rank0 or s.rank_conditional or m.mentions_rank(s.node) or _runs_once(m, s)) for s in writes)

    @staticmethod
    def _run_judged_elsewhere(m, site) -> bool:
        """``wandb.log`` acts on the run this process started: under ``if wandb.run is not None:``, or in a module
        whose run starts (``wandb.init``) are all on rank 0, it logs once; where a start runs on every rank, that
        start is the warning (one cause, one warning)."""
        if any(dotted(n) in m.P.active_run_names for test in _enclosing_tests(m, site) for n in walk(test)):
            return True
        return bool(m.calls_named(m.P.tracker_run_starters))

    @staticmethod
    def _on_error_path(m, site) -> bool:
        """The call sits in an ``if`` of the loop whose block leaves the step (``continue``, ``break``, ``raise``,
        ``return``): ``if torch.isnan(loss): print("nan, skipping"); continue`` reports what happened on this rank."""
        loop = site.ctx.loops[-1]
        for node in m.nodes_in(loop):
            if isinstance(node, ast.If) and node is not loop:
                for block in (node.body, node.orelse):
                    if block and isinstance(block[-1], (ast.Continue, ast.Break, ast.Raise, ast.Return)) and any(
                            contains(stmt, site.node) for stmt in block):
                        return True
        return False

    @staticmethod
    def _private_target(m, site) -> bool:
        """``torch.save(obj, buffer)`` into ``io.BytesIO()``, or inside ``with TemporaryDirectory():``: the bytes
        stay in this process (they are then uploaded or broadcast), no file is shared between ranks; or inside
        ``with FileLock(...):``, one writer at a time."""
        private = m.P.private_write_targets
        if any(w in private or last(w) in m.P.serialising_write_contexts for w in site.ctx.withs):
            return True
        target = site.arg(1, "f") if site.name else None
        made = m.value_call(target, site.line, site.ctx.func) if target is not None else None
        return made is not None and made.name in private

    @staticmethod
    def _per_item_output(m, site) -> bool:
        """The path depends on the rank or on the loop's item (each rank writes its own files), not one shared file;
        the item under any unpacking (``for i, (output, path) in enumerate(zip(outputs, paths)):``)."""
        path = site.arg(1, "f") if site.name else site.arg(0, "save_directory")
        if path is None:
            return False
        roots = derivation(m, path, site)
        if any(m.mentions_rank(root) for root in roots) or _attribute_set_per_rank(m, roots):
            return True
        items = {n.id for loop in site.ctx.loops if getattr(loop, "target", None) is not None
                 for n in walk(loop.target) if isinstance(n, ast.Name)}
        return any(isinstance(n, ast.Name) and n.id in items for root in roots for n in walk(root))

    @staticmethod
    def _registered_callbacks(m) -> set[str]:
        """Functions handed to a framework hook (``accelerator.register_save_state_pre_hook(save_model_hook)``):
        the framework decides on which ranks they run."""
        return {dotted(arg) for s in m.calls if m.P.matches("callback_registrars", s.method)
                for arg in [*s.node.args, *(k.value for k in s.node.keywords)] if dotted(arg)}

    @staticmethod
    def _loggers(m) -> set[str]:
        """Logger names that log on every rank (not Accelerate's get_logger, which logs on the main process)."""
        names = {alias for alias, qual in m.aliases.items() if qual in m.P.logging_modules}
        for target, bindings in m.bindings.items():
            for b in bindings:
                made = m.site_of(b.value) if hasattr(b.value, "func") else None
                if made is not None and made.method in m.P.logger_factories and made.name not in m.P.main_process_loggers:
                    names.add(target)
        return names



def _runs_once(m, site, depth: int = 2) -> bool:
    """The call runs once per process: outside any loop, at module level or in a local function every call of which
    (in this module, followed ``depth`` callers up) is outside loops too. A one-off event-file write (the config as
    text) lands once in each rank's own file: duplicated, not interleaved into another rank's curve."""
    if site.ctx.loops:
        return False
    func = site.ctx.func
    if func is None:
        return True
    callers = [c for c in m.calls if c.method == func.name and local_callee(m, c) is func]
    return depth > 0 and bool(callers) and all(_runs_once(m, c, depth - 1) for c in callers)


def _per_sample(m, site, depth: int = 3) -> bool:
    """The write runs for one sample of a map-style dataset: in ``__getitem__`` or a method of the same class it
    reaches through ``self.<method>()`` (``get_item -> get_audio -> torch.save(spec, wav_path + ".spec.pt")``, a
    feature cache filled on first read). The sampler hands each sample to one rank: a per-sample file has one
    writer, not N."""
    func = site.ctx.func
    if func is None or func.cls is None:
        return False
    item_getter = next((f for f in m.functions.get("__getitem__", ()) if f.cls == func.cls), None)
    if item_getter is None:
        return False
    reached, frontier = {item_getter.node}, [item_getter]
    for _ in range(depth):
        callees = [f for caller in frontier for s in m.calls if s.ctx.func is caller and s.recv == "self"
                   for f in m.functions.get(s.method, ()) if f.cls == func.cls and f.node not in reached]
        reached.update(f.node for f in callees)
        frontier = callees
    return func.node in reached


def _attribute_set_per_rank(m, roots: list[ast.AST]) -> bool:
    """The path reads an attribute that some method sets from the rank (``self.queue_path = os.path.join(folder,
    f"queue{self.trainer.global_rank}.pth")`` in a set-up hook, saved to in another): each rank has its own file."""
    attributes = {dotted(n) for root in roots for n in walk(root) if isinstance(n, ast.Attribute)} - {None}
    return any(m.mentions_rank(value) for name in attributes for b in m.bindings.get(name, ())
               for value in derivation(m, b.value, b))


def _enclosing_tests(m, site) -> list[ast.AST]:
    """The tests of the ``if`` statements (and conditional expressions) around a call in its function."""
    scope = site.ctx.func.node if site.ctx.func is not None else m.tree
    return _tests_around(m, scope, site.node)


def _tests_around(m, scope: ast.AST, target: ast.AST) -> list[ast.AST]:
    return [node.test for node in m.nodes_in(scope) if isinstance(node, (ast.If, ast.IfExp))
            and any(contains(stmt, target) for stmt in ([node.body] if isinstance(node, ast.IfExp) else node.body)
                    + ([node.orelse] if isinstance(node, ast.IfExp) else node.orelse))]


def _in_one_process_arm(m, site) -> bool:
    """The write sits in the arm of an ``if`` that runs only when there is one process: ``if world_size <= 1:``
    (``== 1``, ``< 2``), the ``else`` of ``if world_size > 1:``, ``if not dist.is_initialized():``, ``if
    args.local_rank == -1:`` (HF Trainer's ``_save_rng_state``: one file alone, one file per process otherwise)."""
    scope = site.ctx.func.node if site.ctx.func is not None else m.tree
    for node in m.nodes_in(scope):
        if not isinstance(node, ast.If):
            continue
        alone = _one_process_when(m, node.test)
        if alone is None:  # ``alone = args.local_rank == -1`` then ``if alone:``: the test the flag holds
            held = m.flag_test(node.test, node.lineno, site.ctx.func)
            alone = _one_process_when(m, held) if held is not None else None
        if alone is None:
            continue
        arm = node.body if alone else node.orelse
        if any(contains(stmt, site.node) for stmt in arm):
            return True
    return False


def _one_process_when(m, test: ast.AST) -> bool | None:
    """True when the test holds only for one process, False when it fails only for one, None otherwise."""
    absent = launcher_absent_when(m, test)  # ``if 'RANK' not in os.environ:``: no launcher, one process
    if absent is not None:
        return absent
    if isinstance(test, ast.NamedExpr):  # ``if (alone := local_rank == -1):`` tests the value it binds
        return _one_process_when(m, test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _one_process_when(m, test.operand)
        if inner is not None:
            return not inner
        words = {w.lower() for n in walk(test.operand) for w in (getattr(n, "id", None), getattr(n, "attr", None)) if w}
        return True if any(f in w for w in words for f in m.P.distributed_flag_words) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    words = {w.lower() for n in walk(test.left) for w in (getattr(n, "id", None), getattr(n, "attr", None)) if w}
    bound, op = const(test.comparators[0]), test.ops[0]
    if bound == -1 and isinstance(op, (ast.Eq, ast.NotEq)) and (m.guards.is_rank_expr(test.left) or any(
            w.endswith("rank") for w in words | {n.value.lower() for n in walk(test.left)
                                                  if isinstance(n, ast.Constant) and isinstance(n.value, str)})):
        return isinstance(op, ast.Eq)  # `if args.local_rank == -1:`: the launcher gave no rank, one process
    if not any("world_size" in w or w in m.P.process_count_words for w in words):
        return None
    if bound == 1 and isinstance(op, (ast.LtE, ast.Eq)) or bound == 2 and isinstance(op, ast.Lt):
        return True
    if bound == 1 and isinstance(op, (ast.Gt, ast.NotEq)) or bound == 2 and isinstance(op, ast.GtE):
        return False
    return None


def _off_by_default(m, site) -> bool:
    """The tracker starts only behind a switch the script leaves off by default: inside ``if args.log_wandb:`` (a
    ``store_true`` option, or ``default=False``/``None``), ``if TRACK:`` (a module constant ``False``), ``if track:``
    (a parameter defaulting to ``False`` that no call in the file sets); or ``wandb.init(mode="disabled" unless such
    a switch)``. The default run starts no tracker at all."""
    scope = site.ctx.func.node if site.ctx.func is not None else m.tree
    for node in m.nodes_in(scope):
        if isinstance(node, ast.If) and node is not site.node:
            arm = (True if any(contains(stmt, site.node) for stmt in node.body) else
                   False if any(contains(stmt, site.node) for stmt in node.orelse) else None)
            if arm is not None and switch_value(m, node.test, site) is (not arm):
                return True
    mode = site.kw("mode")
    if isinstance(mode, ast.IfExp):
        chosen = switch_value(m, mode.test, site)
        mode = None if chosen is None else (mode.body if chosen else mode.orelse)
    return const(mode) == "disabled"


def _switched_off_by_rank(m) -> set[str]:
    """Packages (``wandb``) whose switch variable the module sets in ``os.environ`` from a rank expression or under
    a rank test: their trackers run on rank 0 only."""
    switches = {variable: package for package, _, variable in
                (item.partition(":") for item in m.P.tracker_switch_variables)}
    found = set()
    for node in m.assigns:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            key = const(target.slice) if isinstance(target, ast.Subscript) else None
            if (isinstance(key, str) and key in switches and dotted(target.value) == "os.environ" and (
                    m.mentions_rank(node.value) or any(m.mentions_rank(test) or m.guards.classify(test)
                                                       for test in _tests_around(m, m.tree, node)))):
                found.add(switches[key])
    return found


CHECKER = LoggingFromAllRanksChecker()
