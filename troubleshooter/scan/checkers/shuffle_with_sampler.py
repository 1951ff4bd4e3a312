"""shuffle-with-sampler: ``DataLoader(shuffle=True, sampler=...)``."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import dataloaders, dataset_name, loader_label, resolved_const, truthy_literal
from troubleshooter.scan.model import const, dotted, source


class ShuffleWithSamplerChecker(Checker):
    """shuffle=True next to a sampler: DataLoader raises, or the shuffle is meant for the sampler."""

    id = "shuffle-with-sampler"

    def check(self, m):
        for site in dataloaders(m):
            sampler = site.kw("sampler")
            if sampler is None or const(sampler, default=...) is None or not self._true(m, site):
                continue
            loader = loader_label(site)
            name = dotted(sampler) or source(sampler)
            yield Hit(site.line, f"{loader} passes shuffle=True together with sampler={name}: DataLoader raises "
                                 "'sampler option is mutually exclusive with shuffle'; the DistributedSampler "
                                 "shuffles by itself",
                      {"loader": loader, "sampler": name, "dataset": dataset_name(site) or "dataset"})


    @staticmethod
    def _true(m, site) -> bool:
        """shuffle=True, or a name, option default or config key that evidently holds True."""
        value = site.kw("shuffle")
        return truthy_literal(value) or resolved_const(m, value, site) is True


CHECKER = ShuffleWithSamplerChecker()
