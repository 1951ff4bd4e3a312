"""unnecessary-find-unused-parameters: find_unused_parameters=True where every parameter gets a gradient."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import ddp_wraps, wrapped_name
from troubleshooter.scan.checkers._modules import ALWAYS, wrapped_classes
from troubleshooter.scan.model import const


class UnnecessaryFindUnusedChecker(Checker):
    """The wrapped model's forward uses every parameter-owning submodule unconditionally.

    ``info``: the flag costs one graph traversal per iteration, a slowdown whose size the code does not show, and
    whether every parameter really gets a gradient also depends on the loss (outputs it ignores leave their
    parameters unused). PyTorch's own run-time warning is the proof (the log signature keeps the severity)."""

    id = "unnecessary-find-unused-parameters"

    def check(self, m):
        analysed = {id(wrap.node): cls for wrap, cls in wrapped_classes(m)}
        for wrap in ddp_wraps(m):
            if const(wrap.kw("find_unused_parameters")) is not True:
                continue
            model = wrapped_name(wrap) or "model"
            cls = analysed.get(id(wrap.node))
            if cls is not None:
                if cls.dynamic or cls.unknown or not cls.params or cls.random_branches or "checkpoint" in m.text:
                    continue
                if any(cls.uses.get(attr) != ALWAYS for attr in cls.params):
                    continue
                what = f"{cls.name}.forward uses every parameter-owning submodule on every call"
            else:
                factory = self._factory(m, wrap)
                if not factory:
                    continue
                what = f"{factory} uses all of its parameters in every forward"
            yield Hit(wrap.line, f"DDP({model}, find_unused_parameters=True) but {what}: the extra graph traversal "
                                 "each iteration only costs time", {"model": model}, severity="info")

    @staticmethod
    def _factory(m, wrap) -> str | None:
        name = wrapped_name(wrap)
        binding = m.binding(name, wrap.line, wrap.ctx.func) if name else None
        node = binding.value if binding else wrap.arg(0, "module")
        made = m.value_call(node, wrap.line, wrap.ctx.func)
        while made is not None and made.method in ("to", "cuda") and made.node.func is not None:
            inner = getattr(made.node.func, "value", None)
            made = m.site_of(inner) if inner is not None else None
        if made is not None and m.P.matches("all_parameters_used_factories", made.name):
            return made.name.rpartition(".")[2]
        return None


CHECKER = UnnecessaryFindUnusedChecker()
