"""gradient-checkpointing-conflict: reentrant activation checkpointing with DDP(find_unused_parameters=True)."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import ddp_wraps, wrapped_name
from troubleshooter.scan.model import const


class GradientCheckpointingConflictChecker(Checker):
    """checkpoint(...) without use_reentrant=False while a DDP wrap sets find_unused_parameters=True."""

    id = "gradient-checkpointing-conflict"

    def check(self, m):
        wraps = [w for w in ddp_wraps(m) if const(w.kw("find_unused_parameters")) is True]
        if not wraps:
            return
        model = wrapped_name(wraps[0]) or "model"
        for site in m.calls:
            reentrant = None
            if site.name in m.P.activation_checkpoint:
                reentrant = const(site.kw("use_reentrant"), default=True) is not False
            elif site.method in m.P.hf_gradient_checkpointing:
                kwargs = const(site.kw("gradient_checkpointing_kwargs"), default={}) or {}
                reentrant = not (isinstance(kwargs, dict) and kwargs.get("use_reentrant") is False)
            if reentrant:
                yield Hit(site.line, f"reentrant activation checkpointing with DDP({model}, find_unused_parameters=True) "
                                     f"(line {wraps[0].line}) marks parameters ready twice: 'Expected to mark a "
                                     "variable ready only once'; pass use_reentrant=False", {"model": model})


CHECKER = GradientCheckpointingConflictChecker()
