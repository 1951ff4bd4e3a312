"""unused-parameters-error: a DDP model whose forward skips parameters, without find_unused_parameters."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import wrapped_name
from troubleshooter.scan.checkers._modules import INPUT, flag_off, wrapped_classes
from troubleshooter.scan.model import const


class UnusedParametersErrorChecker(Checker):
    """A parameter-owning submodule never used by forward, or used only on some inputs."""

    id = "unused-parameters-error"

    def check(self, m):
        if "requires_grad" in m.text:
            return  # frozen layers are legitimately unused; we cannot tell which
        for wrap, cls in wrapped_classes(m):
            flag = wrap.kw("find_unused_parameters")
            if flag is not None and const(flag, default=True) is not False:
                continue
            if cls.dynamic:
                continue
            model = wrapped_name(wrap) or "model"
            for attr, line in sorted(cls.params.items(), key=lambda kv: kv[1]):
                if attr in cls.conditional_init:
                    continue
                use = cls.uses.get(attr)
                if use is None:
                    why = f"self.{attr} (line {line}) is never used by {cls.name}.forward"
                elif use == INPUT:
                    why = f"self.{attr} is used only under an input-dependent branch (line {cls.use_lines[attr]})"
                elif attr in cls.flag_uses and flag_off(m, wrap, cls, cls.flag_uses[attr]):
                    why = (f"self.{attr} is used only when self.{cls.flag_uses[attr]} is set (line "
                           f"{cls.use_lines[attr]}), which this model is built without")
                else:
                    continue
                yield Hit(wrap.line, f"{why}, so its parameters get no gradient and DDP({model}) without "
                                     "find_unused_parameters=True fails with 'Expected to have finished reduction in "
                                     "the prior iteration'", {"model": model, "variable": f"self.{attr}"})


CHECKER = UnusedParametersErrorChecker()
