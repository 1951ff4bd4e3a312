"""unsynced-init-seed: ranks build their own model with no seed and sync gradients by hand (no DDP)."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.model import source


class UnsyncedInitSeedChecker(Checker):
    """Manual gradient all_reduce, no DDP wrapper (DDP broadcasts rank 0's weights), no seed, no broadcast."""

    id = "unsynced-init-seed"

    def check(self, m):
        P = m.P
        if m.calls_named(P.ddp_wrappers) or m.calls_to(P.seed_calls) or not m.calls_named(P.init_process_group):
            return
        if any(c.name == "torch.distributed.broadcast" for c in m.calls):
            return
        grads = [c for c in m.calls if c.name == "torch.distributed.all_reduce" and ".grad" in source(c.node)]
        if not grads:
            return
        model = self._model(m) or "model"
        first = grads[0]
        yield Hit(first.line, f"{source(first.node)} averages gradients by hand, but {model} is built with no "
                              "torch.manual_seed and its weights are never broadcast: each rank starts from "
                              "different weights and the replicas never agree", {"model": model})

    @staticmethod
    def _model(m) -> str | None:
        for loop in m.loops:
            it = getattr(loop.node, "iter", None)
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in (
                    "parameters", "named_parameters"):
                site = m.site_of(it)
                if site and site.recv:
                    return site.recv
        return None


CHECKER = UnsyncedInitSeedChecker()
