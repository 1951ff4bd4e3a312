"""missing-set-epoch: a shuffling DistributedSampler whose ``set_epoch`` is never called."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import dataloaders, loader_label
from troubleshooter.scan.model import const, dotted


class MissingSetEpochChecker(Checker):
    """DistributedSampler(shuffle not False), several epochs, and no ``.set_epoch(`` anywhere in the file."""

    id = "missing-set-epoch"

    def check(self, m):
        if m.methods("set_epoch"):
            return
        for site in m.calls_named(m.P.distributed_samplers):
            if const(site.kw("shuffle"), default=True) is False:
                continue
            loader = next((dl for dl in dataloaders(m) if site.node is dl.kw("sampler") or (
                site.assigned_to and dotted(dl.kw("sampler")) == site.assigned_to)), None)
            if loader is None:
                continue
            loader_name = loader_label(loader)
            sampler = site.assigned_to or f"{loader_name}.sampler"
            epoch_var = self._epoch_loop(m, loader_name)
            if epoch_var is None:
                continue
            yield Hit(site.line, f"{sampler} is a shuffling DistributedSampler but {sampler}.set_epoch({epoch_var}) "
                                 "is never called: every epoch repeats the same order on every rank",
                      {"sampler": sampler, "loader": loader_name, "variable": epoch_var})

    @staticmethod
    def _epoch_loop(m, loader: str) -> str | None:
        """The epoch loop variable, when the script loops over epochs (or re-iterates the loader)."""
        for loop in m.loops:
            if loop.target and "epoch" in loop.target.lower():
                return loop.target
        for loop in m.loops:
            if loader in loop.iter_names and loop.ctx.loops:
                outer = loop.ctx.loops[-1]
                return dotted(getattr(outer, "target", None)) or "epoch"
        return None


CHECKER = MissingSetEpochChecker()
