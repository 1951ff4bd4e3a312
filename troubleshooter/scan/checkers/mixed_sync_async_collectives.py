"""mixed-sync-async-collectives: ``async_op=True`` collectives whose work handle is never waited on."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import collective_names
from troubleshooter.scan.model import const, source


class MixedSyncAsyncCollectivesChecker(Checker):
    """The handle returned by an async collective is dropped or never read."""

    id = "mixed-sync-async-collectives"

    def check(self, m):
        names = collective_names(m)
        for site in m.calls:
            if site.name not in names or const(site.kw("async_op")) is not True:
                continue
            handle = site.assigned_to
            if not site.discarded and (handle is None or m.loaded[handle] > 0):
                continue
            tensor = source(site.arg(0)) if site.arg(0) is not None else "the tensor"
            dropped = "is discarded" if site.discarded else f"({handle}) is never waited on"
            yield Hit(site.line, f"{site.name.rpartition('.')[2]}({tensor}, async_op=True): the work handle {dropped}, "
                                 f"so {tensor} is read before the collective has finished",
                      {"variable": tensor})


CHECKER = MixedSyncAsyncCollectivesChecker()
