"""unsynced-init-seed: ranks build their own model with no seed and sync gradients by hand (no DDP)."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import ddp_wraps, wrapped_name
from troubleshooter.scan.model import dotted, source


class UnsyncedInitSeedChecker(Checker):
    """No seed, no broadcast: a manual gradient all_reduce with no DDP wrapper (DDP broadcasts rank 0's weights), or
    a second model copied from the model before the DDP wrap (the wrap syncs only the model it wraps)."""

    id = "unsynced-init-seed"

    def check(self, m):
        P = m.P
        if m.calls_to(P.seed_calls) or not m.calls_named(P.init_process_group):
            return
        if any(c.name == "torch.distributed.broadcast" for c in m.calls):
            return
        if m.calls_named(P.ddp_wrappers):
            yield from self._copied_before_wrap(m)
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
    def _copied_before_wrap(m):
        """A second model (an EMA / momentum / key encoder) copied from the model before DDP wraps it
        (``model_ema.load_state_dict(model.state_dict())``, ``model_ema = copy.deepcopy(model)``), with no seed: DDP
        then broadcasts rank 0's weights into the wrapped model only, so each rank's copy keeps its own random
        initialisation (bl0/moco#4). Quiet when the model's weights were loaded first (a checkpoint, pretrained
        weights: the same on every rank) or the copy is wrapped too."""
        wraps = ddp_wraps(m)
        wrapped_too = {w.assigned_to for w in wraps} | {wrapped_name(w) for w in wraps}
        for wrap in wraps:
            model = wrapped_name(wrap)
            if not model:
                continue
            binding = m.binding(model, wrap.line, wrap.ctx.func)
            if binding is not None and "pretrained" in source(binding.value):
                continue
            for site in m.calls:
                if site.ctx.func is not wrap.ctx.func or site.line >= wrap.line:
                    continue
                copy = None
                if site.method == "load_state_dict" and site.recv and site.node.args and isinstance(
                        site.node.args[0], ast.Call) and dotted(site.node.args[0].func) == f"{model}.state_dict":
                    copy = site.recv
                elif site.name == "copy.deepcopy" and site.node.args and dotted(site.node.args[0]) == model:
                    copy = site.assigned_to
                if not copy or copy in wrapped_too or any(
                        s.method == "load_state_dict" and s.recv == model and s.line < site.line
                        and s.ctx.func is wrap.ctx.func for s in m.calls):
                    continue
                yield Hit(site.line, f"{copy} is copied from {model} before DDP wraps it, and no seed is set: DDP "
                                     f"broadcasts rank 0's weights into the wrapped {model} only, so each rank's "
                                     f"{copy} keeps its own random initialisation; seed every process alike before "
                                     f"building the model (or copy after the wrap from {model}.module)",
                          {"model": copy}, severity="warning")  # a copy that provably stays unsynced: a defect
                return

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
