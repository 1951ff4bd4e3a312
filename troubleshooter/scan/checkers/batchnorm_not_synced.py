"""batchnorm-not-synced: BatchNorm in a DDP model on GPUs without SyncBatchNorm conversion."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import dataloaders, ddp_wraps, resolved_const, wrapped_name
from troubleshooter.scan.model import const


class BatchnormNotSyncedChecker(Checker):
    """BatchNorm layers (or a torchvision model that has them) + DDP on CUDA + no convert_sync_batchnorm, unless every
    loader the ranks train from takes a large per-rank batch fixed in the code (a literal of at least
    ``large_per_rank_batch`` of rules/scan/patterns.yaml; a command-line option's default is the user's to change,
    so it does not count)."""

    id = "batchnorm-not-synced"

    def check(self, m):
        if m.calls_to(m.P.sync_batchnorm) or ("cuda" not in m.text and "nccl" not in m.text):
            return
        # affine=False: a parameter-free normaliser of frozen features (linear probing), per-GPU by design
        bn = [c for c in m.calls_named(m.P.batchnorm_layers) if const(c.kw("affine"), default=True) is not False] or [
            c for c in m.calls if c.name.startswith("torchvision.") and m.P.matches("batchnorm_model_factories", c.name)]
        if not bn or self._large_per_rank_batches(m):
            return
        layer = bn[0].name.rpartition(".")[2]
        for wrap in ddp_wraps(m):
            model = wrapped_name(wrap) or "model"
            yield Hit(wrap.line, f"{model} has BatchNorm ({layer} at line {bn[0].line}) and is wrapped in DDP without "
                                 "SyncBatchNorm.convert_sync_batchnorm: each GPU normalises with the statistics of "
                                 "its own small batch", {"model": model})

    @staticmethod
    def _large_per_rank_batches(m) -> bool:
        """Every DataLoader outside rank-0-only code takes a batch_size the code fixes to a large integer: a literal,
        or a name its function binds to that literal only."""
        sizes = [_fixed_int(m, site) for site in dataloaders(m) if not site.rank0]
        return bool(sizes) and all(size is not None and size >= m.P.large_per_rank_batch for size in sizes)


def _fixed_int(m, site) -> int | None:
    """The batch size a loader call evidently takes (keyword, or second positional: every DataLoader of the list takes
    ``(dataset, batch_size, ...)``): a literal, a name its function binds to one literal, the unchanged default of the
    command-line option or configuration field it reads (what the shipped run uses)."""
    size = resolved_const(m, site.kw("batch_size") or site.arg(1), site)
    return size if type(size) is int else None


CHECKER = BatchnormNotSyncedChecker()
