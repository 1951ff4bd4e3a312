"""cpu-oversubscribed: every rank starts as many DataLoader workers as the machine has cores."""

from __future__ import annotations

import os

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import dataloaders, loader_label
from troubleshooter.scan.model import const, source


class CpuOversubscribedChecker(Checker):
    """num_workers=os.cpu_count() per rank, or literal workers x literal nprocs above this machine's cores."""

    id = "cpu-oversubscribed"

    def check(self, m):
        nprocs = [const(s.arg(2, "nprocs")) for s in m.calls_named(m.P.spawners)]
        nprocs = [n for n in nprocs if isinstance(n, int) and n > 1]
        cores = os.cpu_count() or 0
        for site in dataloaders(m):
            workers = site.kw("num_workers")
            if workers is None:
                continue
            loader = loader_label(site)
            made = m.value_call(workers, site.line, site.ctx.func)
            if made is not None and made.name in m.P.cpu_count_calls:
                yield Hit(site.line, f"{loader} uses num_workers={source(workers)} in every rank: with N ranks the "
                                     "node runs N x (all cores) worker processes fighting for the same cores",
                          {"loader": loader, "variable": source(workers)})
            elif isinstance(const(workers), int) and nprocs and cores and const(workers) * nprocs[0] > cores:
                yield Hit(site.line, f"{loader} uses num_workers={const(workers)} in each of {nprocs[0]} ranks: "
                                     f"{const(workers) * nprocs[0]} worker processes on a {cores}-core machine",
                          {"loader": loader, "variable": str(const(workers))})


CHECKER = CpuOversubscribedChecker()
