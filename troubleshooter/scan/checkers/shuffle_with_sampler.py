"""shuffle-with-sampler: ``DataLoader(shuffle=True, sampler=...)``."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import (
    dataloaders, dataset_name, loader_label, resolved_const, spread_keywords, truthy_literal,
)
from troubleshooter.scan.model import const, dotted, source


class ShuffleWithSamplerChecker(Checker):
    """shuffle=True next to a sampler: DataLoader raises, or the shuffle is meant for the sampler. Either may come
    through a ``**loader_kwargs`` dict the function builds (``{'shuffle': True}`` merged in for CUDA runs)."""

    id = "shuffle-with-sampler"

    def check(self, m):
        for site in dataloaders(m):
            spread = spread_keywords(m, site)
            sampler, shuffle = site.kw("sampler") or spread.get("sampler"), site.kw("shuffle") or spread.get("shuffle")
            if sampler is None or resolved_const(m, sampler, site, default=...) is None or not (
                    self._true(m, site, shuffle) or self._sometimes_true(m, site, sampler, shuffle)):
                continue
            name = dotted(sampler) or source(sampler)
            found = {"sampler": name, "dataset": dataset_name(site) or "dataset"}
            if site.assigned_to:
                found["loader"] = site.assigned_to  # the title and the fix name the loader only when it has a name
            yield Hit(site.line, f"{loader_label(site)} passes shuffle=True together with sampler={name}: DataLoader "
                                 "raises 'sampler option is mutually exclusive with shuffle'; the DistributedSampler "
                                 "shuffles by itself", found)


    @staticmethod
    def _true(m, site, value) -> bool:
        """shuffle=True, or a name, option default or config key that evidently holds True."""
        return truthy_literal(value) or resolved_const(m, value, site) is True

    @staticmethod
    def _sometimes_true(m, site, sampler, value) -> bool:
        """``shuffle=(split == "train")`` next to a DistributedSampler the loader always gets (built in the call, or
        the only value of its name in the function): DataLoader raises whenever the expression is true. Quiet when
        the expression looks at the sampler, at None or at a distributed flag (``shuffle=sampler is None``)."""
        if value is None or const(value, default=...) is not ... or dotted(value):
            return False  # a literal, or a plain name / option (resolved by _true when it evidently holds True)
        name = dotted(sampler)
        values = [b.value for b in m.bindings.get(name, ()) if b.func is site.ctx.func] if name else [sampler]
        if len(values) != 1 or not isinstance(values[0], ast.Call) or m.qual(values[0].func) not in m.P.distributed_samplers:
            return False
        words = {w.lower() for n in ast.walk(value) for w in (getattr(n, "id", None), getattr(n, "attr", None)) if w}
        return not (name and name in {dotted(n) for n in ast.walk(value)}) and not any(
            isinstance(n, ast.Constant) and n.value is None for n in ast.walk(value)) and not any(
            flag in w for w in words for flag in m.P.distributed_flag_words) and "sampler" not in " ".join(words)


CHECKER = ShuffleWithSamplerChecker()
