"""batchnorm-not-synced: BatchNorm in a DDP model on GPUs without SyncBatchNorm conversion."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import ddp_wraps, wrapped_name
from troubleshooter.scan.model import const


class BatchnormNotSyncedChecker(Checker):
    """BatchNorm layers (or a torchvision model that has them) + DDP on CUDA + no convert_sync_batchnorm."""

    id = "batchnorm-not-synced"

    def check(self, m):
        if m.calls_to(m.P.sync_batchnorm) or ("cuda" not in m.text and "nccl" not in m.text):
            return
        # affine=False: a parameter-free normaliser of frozen features (linear probing), per-GPU by design
        bn = [c for c in m.calls_named(m.P.batchnorm_layers) if const(c.kw("affine"), default=True) is not False] or [
            c for c in m.calls if c.name.startswith("torchvision.") and m.P.matches("batchnorm_model_factories", c.name)]
        if not bn:
            return
        layer = bn[0].name.rpartition(".")[2]
        for wrap in ddp_wraps(m):
            model = wrapped_name(wrap) or "model"
            yield Hit(wrap.line, f"{model} has BatchNorm ({layer} at line {bn[0].line}) and is wrapped in DDP without "
                                 "SyncBatchNorm.convert_sync_batchnorm: each GPU normalises with the statistics of "
                                 "its own small batch", {"model": model})


CHECKER = BatchnormNotSyncedChecker()
