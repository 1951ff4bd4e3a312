"""batch-size-mismatch: the global batch size handed to each rank's DataLoader."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import dataloaders, loader_label
from troubleshooter.scan.model import dotted, last


class BatchSizeMismatchChecker(Checker):
    """``DataLoader(batch_size=args.global_batch_size)``: each rank takes the global batch, world-size times too big."""

    id = "batch-size-mismatch"

    def check(self, m):
        for site in dataloaders(m):
            size = dotted(site.kw("batch_size"))
            if size and m.P.matches("global_batch_names", last(size).lower()):
                loader = loader_label(site)
                yield Hit(site.line, f"{loader} takes batch_size={size} on every rank: DDP's global batch is then "
                                     f"{size} x world_size; divide it by the world size (and the accumulation steps)",
                          {"loader": loader, "variable": size})


CHECKER = BatchSizeMismatchChecker()
