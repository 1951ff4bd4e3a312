"""checkpoint-without-module: ``state_dict()`` of the DDP wrapper saved (keys get a ``module.`` prefix)."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import contains, wrapper_names
from troubleshooter.scan.model import dotted


class CheckpointWithoutModuleChecker(Checker):
    """``torch.save(ddp_model.state_dict(), ...)`` after ``ddp_model = DDP(...)`` in the same scope."""

    id = "checkpoint-without-module"

    def check(self, m):
        if "consume_prefix_in_state_dict_if_present" in m.text or any("module." in s for s in m.strings):
            return  # the loading side strips the prefix
        wrappers = wrapper_names(m)
        for site in m.methods("state_dict"):
            wrap = wrappers.get(site.recv)
            if wrap is None or site.line <= wrap.line or site.ctx.func is not wrap.ctx.func:
                continue
            if wrap.ctx.sides or wrap.ctx.dist_branch or self._in_conditional_expr(m, site):
                continue  # wrapped only sometimes, or the code picks wrapper vs .module itself
            rebound = m.binding(site.recv, site.line, site.ctx.func)
            if rebound is None or rebound.value is not wrap.node:
                continue
            if not self._saved(m, site) or self._restored_into_wrapper(m, site.recv):
                continue
            yield Hit(site.line, f"{site.recv}.state_dict() is the DDP wrapper's: every key starts with 'module.', "
                                 f"so loading it into a plain model fails; save {site.recv}.module.state_dict()",
                      {"model": site.recv})

    @staticmethod
    def _restored_into_wrapper(m, wrapper: str) -> bool:
        """The script loads its checkpoints back into the wrapper itself (``module.`` keys on both sides)."""
        for site in m.calls:
            if site.recv == wrapper and site.method == "load_state_dict":
                return True
            values = [*site.node.args, *(k.value for k in site.node.keywords)]
            if m.P.matches("checkpoint_restore_calls", site.method) and any(dotted(v) == wrapper for v in values):
                return True
        return False

    @staticmethod
    def _in_conditional_expr(m, site) -> bool:
        return any(isinstance(node, ast.IfExp) and contains(node, site.node)
                   for node in ast.walk(m.tree))

    @staticmethod
    def _saved(m, site) -> bool:
        """The state dict ends up in torch.save(...) (directly, or via a variable / dict)."""
        for save in m.calls_to(m.P.checkpoint_writers):
            if save.ctx.func is not site.ctx.func or save.line < site.line:
                continue
            roots = [save.node]
            for arg in save.node.args:
                name = dotted(arg)
                binding = m.binding(name, save.line, save.ctx.func) if name else None
                if binding is not None:
                    roots.append(binding.value)
            if any(contains(root, site.node) for root in roots):
                return True
        return False


CHECKER = CheckpointWithoutModuleChecker()
