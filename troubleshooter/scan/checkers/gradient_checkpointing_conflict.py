"""gradient-checkpointing-conflict: reentrant activation checkpointing with DDP(find_unused_parameters=True)."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import ddp_wraps, resolved_const, spread_keywords, wrapped_name
from troubleshooter.scan.model import const, dotted


class GradientCheckpointingConflictChecker(Checker):
    """checkpoint(...) without use_reentrant=False while a DDP wrap sets find_unused_parameters=True."""

    id = "gradient-checkpointing-conflict"

    def check(self, m):
        source = self._find_unused_source(m)
        wraps = ddp_wraps(m)
        if source is None:
            if wraps and not self._static_graph(m, wraps):
                yield from self._reused_module(m, wrapped_name(wraps[0]) or "model")
            return
        line, model = source
        for site in m.calls:
            if site.method in m.P.hf_gradient_checkpointing and site.ctx.optional:
                continue  # a model switch the script flips only on request (``if args.gradient_checkpointing:``)
            if self._reentrant(m, site):
                yield Hit(site.line, f"reentrant activation checkpointing with DDP({model}, find_unused_parameters=True) "
                                     f"(line {line}) marks parameters ready twice: 'Expected to mark a "
                                     "variable ready only once'; pass use_reentrant=False", {"model": model})
        for flag_line, spelled in self._flags_on(m):
            yield Hit(flag_line, f"{spelled} turns on Hugging Face's reentrant gradient checkpointing while DDP({model}) "
                                 f"has find_unused_parameters=True (line {line}): parameters are marked ready twice, "
                                 "'Expected to mark a variable ready only once'; pass find_unused_parameters=False "
                                 "or use_reentrant=False", {"model": model})

    @staticmethod
    def _flags_on(m):
        """(line, spelling) of the older switches: ``config.gradient_checkpointing = True`` (an attribute bound to a
        true literal) and a ``gradient_checkpointing=True`` keyword with no use_reentrant=False beside it."""
        flags = m.P.gradient_checkpointing_flags
        for target, bindings in m.bindings.items():
            if "." in target and target.rpartition(".")[2] in flags:
                for b in bindings:
                    if const(b.value) is True and not b.ctx.optional:
                        yield b.line, f"{target} = True"
        for site in m.calls:
            for keyword in site.node.keywords:
                if keyword.arg in flags and const(keyword.value) is True and not site.ctx.optional:
                    kwargs = const(site.kw("gradient_checkpointing_kwargs"), default={}) or {}
                    if not (isinstance(kwargs, dict) and kwargs.get("use_reentrant") is False):
                        yield site.line, f"{site.method}({keyword.arg}=True)"

    @staticmethod
    def _find_unused_source(m) -> tuple[int, str] | None:
        """(line, model) of a find_unused_parameters=True: a DDP wrap, a framework's DDP settings (Accelerate's
        DistributedDataParallelKwargs, Lightning's DDPStrategy, TrainingArguments) or Lightning's strategy string.
        The flag may be a literal, an option's unchanged default (``args.find_unused_parameters``) or a name bound once."""
        for wrap in ddp_wraps(m):
            flag = wrap.kw("find_unused_parameters") or spread_keywords(m, wrap).get("find_unused_parameters")
            if resolved_const(m, flag, wrap) is True:  # also passed as ``**ddp_kwargs`` built in the function
                return wrap.line, wrapped_name(wrap) or "model"
        for site in m.calls_named(m.P.ddp_settings):
            if any(resolved_const(m, site.kw(k), site) is True
                   for k in ("find_unused_parameters", "ddp_find_unused_parameters")):
                return site.line, "model"
        if "ddp_find_unused_parameters_true" in m.strings:
            return next((s.line for s in m.calls if "ddp_find_unused_parameters_true" in
                         [const(k.value) for k in s.node.keywords]), 1), "model"
        return None

    @staticmethod
    def _reentrant(m, site) -> bool:
        if site.name in m.P.activation_checkpoint:
            return const(site.kw("use_reentrant"), default=True) is not False
        if site.method in m.P.hf_gradient_checkpointing:
            kwargs = const(site.kw("gradient_checkpointing_kwargs"), default={}) or {}
            return not (isinstance(kwargs, dict) and kwargs.get("use_reentrant") is False)
        return False

    @staticmethod
    def _static_graph(m, wraps) -> bool:
        return any(const(w.kw("static_graph")) is True for w in wraps) or bool(m.methods("_set_static_graph"))

    def _reused_module(self, m, model: str):
        """Reentrant ``checkpoint(self.block, x)`` in a loop: the same parameters go through two reentrant
        backwards in one iteration, which DDP reports as marked ready twice (unless static_graph=True)."""
        for site in m.calls:
            if site.name not in m.P.activation_checkpoint or not site.ctx.loops or not self._reentrant(m, site):
                continue
            fn = dotted(site.arg(0, "function"))
            loop_vars = {dotted(getattr(loop, "target", None)) for loop in site.ctx.loops}
            if fn and fn.startswith("self.") and fn not in loop_vars:
                yield Hit(site.line, f"reentrant checkpoint({fn}, ...) runs inside a loop, so {fn}'s parameters go "
                                     f"through two reentrant backward passes per iteration under DDP({model}): "
                                     "'Expected to mark a variable ready only once'; pass use_reentrant=False "
                                     "(or static_graph=True)", {"model": model})

CHECKER = GradientCheckpointingConflictChecker()
