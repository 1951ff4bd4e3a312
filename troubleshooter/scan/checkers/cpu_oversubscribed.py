"""cpu-oversubscribed: every rank starts as many DataLoader workers as the machine has cores."""

from __future__ import annotations

import ast
import os

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import dataloaders, loader_label, option_default
from troubleshooter.scan.model import const, dotted, source


class CpuOversubscribedChecker(Checker):
    """num_workers=os.cpu_count() per rank, or literal workers x literal nprocs above this machine's cores.

    Both are ``info``: whether the workers compete for cores depends on the training machine (its cores, how much
    of each worker's time is I/O), which the code does not show; the run-time checks on measured cores and
    threads (``rules/checks/workers-exceed-cores.yaml``...) keep the finding's own severity."""

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
            if self._whole_machine(m, workers, site):
                yield Hit(site.line, f"{loader} uses num_workers={source(workers)} in every rank: with N ranks the "
                                     "node runs N x (all cores) worker processes fighting for the same cores",
                          {"loader": loader, "variable": source(workers)}, severity="info")
            elif isinstance(const(workers), int) and nprocs and cores and const(workers) * nprocs[0] > cores:
                yield Hit(site.line, f"{loader} uses num_workers={const(workers)} in each of {nprocs[0]} ranks: "
                                     f"{const(workers) * nprocs[0]} worker processes on a {cores}-core machine",
                          {"loader": loader, "variable": str(const(workers))}, severity="info")

    @staticmethod
    def _whole_machine(m, workers, site) -> bool:
        """The value is the machine's core count: ``os.cpu_count()``, ``len(os.sched_getaffinity(0))``, minus a
        constant, directly or through a name or a command-line option's default (a division, ``min`` or any
        other bound makes it a share, not the whole machine)."""
        node = workers
        for _ in range(3):  # name -> value -> option default
            name = dotted(node)
            if name is None:
                break
            default = option_default(m, name)
            binding = m.binding(name, site.line, site.ctx.func)
            node = default if default is not None else binding.value if binding is not None else node
            if dotted(node) == name:
                break
        while True:
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and isinstance(const(node.right), int):
                node = node.left
            elif isinstance(node, ast.Call) and dotted(node.func) in ("len", "int") and len(node.args) == 1:
                node = node.args[0]
            else:
                break
        return isinstance(node, ast.Call) and m.qual(node.func) in m.P.cpu_count_calls


CHECKER = CpuOversubscribedChecker()
