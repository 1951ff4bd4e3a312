"""grad-accum-without-no-sync: gradient accumulation under DDP that all-reduces on every micro-step."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import contains, wrapper_names
from troubleshooter.scan.model import dotted, last


class GradAccumWithoutNoSyncChecker(Checker):
    """A loop with backward() every iteration and optimizer.step() only every k-th, and no no_sync()."""

    id = "grad-accum-without-no-sync"

    def check(self, m):
        wrappers = wrapper_names(m)
        if not wrappers or m.methods("no_sync") or m.methods("accumulate") or any(
                "require_backward_grad_sync" in name for name in m.loaded):
            return
        model = next(iter(wrappers))
        for loop in m.loops:
            backward = [s for s in m.sites_in(loop.node) if s.method == "backward" and s.ctx.loops and
                        s.ctx.loops[-1] is loop.node]
            if not backward:
                continue
            gate = self._accum_gate(m, loop.node)
            if gate is None or any(contains(gate, b.node) for b in backward):
                continue
            steps = self._accum_name(gate.test)
            yield Hit(backward[0].line, f"gradients are accumulated (optimizer step only when {ast.unparse(gate.test)}) "
                                        f"but every {backward[0].recv or 'loss'}.backward() still all-reduces: wrap "
                                        f"the non-final micro-steps in {model}.no_sync()",
                      {"model": model, "variable": steps or "accumulation_steps"})

    @staticmethod
    def _accum_gate(m, loop: ast.AST) -> ast.If | None:
        for node in ast.walk(loop):
            if not isinstance(node, ast.If):
                continue
            test_is_accum = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(node.test)) \
                or "accum" in ast.unparse(node.test).lower()
            if test_is_accum and any(s.method == "step" and s.recv and ("optim" in s.recv.lower() or
                                     last(s.recv) in ("opt", "scaler")) for s in m.sites_in(node)):
                return node
        return None

    @staticmethod
    def _accum_name(test: ast.AST) -> str | None:
        for node in ast.walk(test):
            text = dotted(node)
            if text and "accum" in text.lower():
                return text
        return None


CHECKER = GradAccumWithoutNoSyncChecker()
