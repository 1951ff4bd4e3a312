"""dataparallel: ``nn.DataParallel`` used instead of DistributedDataParallel."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.model import dotted


class DataParallelChecker(Checker):
    """``torch.nn.DataParallel`` (any import spelling), except on the non-distributed path of a DDP script."""

    id = "dataparallel"
    distributed_only = False
    triggers = ("DataParallel",)

    def check(self, m):
        distributed = m.uses_ddp or (m.project is not None and m.project.raw_distributed)
        for site in m.calls_named(m.P.dataparallel):
            if distributed and site.ctx.dist_branch:
                continue  # the script's single-process path (``else:`` of ``if args.distributed``)
            model = dotted(site.arg(0, "module")) or "model"
            var = site.assigned_to or model
            yield Hit(site.line, f"{var} = DataParallel({model}): one process drives every GPU, re-copies the "
                                 "replicas from GPU 0 each step and serialises on the GIL; use DistributedDataParallel",
                      {"model": model, "variable": var})


CHECKER = DataParallelChecker()
