"""unused-parameters-error: a DDP model whose forward skips parameters, without find_unused_parameters."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import wrapped_name
from troubleshooter.scan.checkers._modules import ALWAYS, INPUT, ModelClass, analyse, flag_off, wrapped_classes
from troubleshooter.scan.model import const, dotted


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
            yield from self._unused_in_submodules(m, wrap, cls, model)
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

    @staticmethod
    def _unused_in_submodules(m, wrap, cls: ModelClass, model: str):
        """A parameter-owning layer that a submodule (an instance of another class of this file, always called by
        the model) builds and its own forward never uses: its parameters get no gradient either."""
        seen, todo = {cls.name}, [(cls, f"self.{attr}") for attr in _always_used(cls)]
        while todo:
            owner, path = todo.pop()
            sub_name = _local_class_of(m, owner, path.rpartition(".")[2])
            if sub_name is None or sub_name in seen:
                continue
            seen.add(sub_name)
            sub = analyse(m, m.classes[sub_name])
            if sub.dynamic:
                continue
            for attr, line in sorted(sub.params.items(), key=lambda kv: kv[1]):
                if attr not in sub.conditional_init and attr not in sub.uses:
                    yield Hit(wrap.line, f"{path}.{attr} ({sub_name}, line {line}) is never used by {sub_name}.forward, "
                                         f"so its parameters get no gradient and DDP({model}) without "
                                         "find_unused_parameters=True fails with 'Expected to have finished reduction in "
                                         "the prior iteration'", {"model": model, "variable": f"{path}.{attr}"})
                    return
            todo += [(sub, f"{path}.{attr}") for attr in _always_used(sub)]


def _always_used(cls: ModelClass) -> list[str]:
    return [attr for attr in cls.params if cls.uses.get(attr) == ALWAYS and attr not in cls.conditional_init]


def _local_class_of(m, owner: ModelClass, attr: str) -> str | None:
    """The class of this file that ``self.<attr> = Cls(...)`` in ``owner.__init__`` instantiates, if any."""
    for node in ast.walk(owner.node):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and dotted(node.targets[0]) == f"self.{attr}" \
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                and node.value.func.id in m.classes:
            return node.value.func.id
    return None


CHECKER = UnusedParametersErrorChecker()
