"""One checker per code pitfall. ``CHECKERS`` is the explicit list (a new checker is added here).

A checker reads a :class:`~troubleshooter.scan.model.ModuleIndex` and yields :class:`Hit`s; the
scanner turns them into ``scan.<id>`` facts. Checkers of DDP pitfalls only run on files that use
raw torch.distributed training (``distributed_only``): a single-process script gets none of them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Iterable

from troubleshooter.scan.model import ModuleIndex

# Substrings one of which a file must contain before it is analysed at all (cheap pre-filter).
DISTRIBUTED_TRIGGERS = ("DistributedDataParallel", "init_process_group", "DistributedSampler")
# When a scan's project is distributed (set-up in a helper, a framework), a file without the triggers above is
# still analysed when it contains one of these: something a DDP checker looks at.
PROJECT_TRIGGERS = ("DataLoader", "backward", ".step(", "torch.save", "wandb", "SummaryWriter", "from_pretrained",
                    "load_dataset", "snapshot_download", "barrier", "all_reduce", "all_gather", "broadcast", "gather",
                    "cuda:0", "cuda(0)", "set_device", "checkpoint", "no_sync", "Sampler", ".map(", ".filter(")


@dataclass
class Hit:
    """One occurrence of a pitfall: the line, a one-line explanation, and the user's names."""

    line: int
    detail: str
    vars: dict[str, str] = field(default_factory=dict)
    end_line: int | None = None
    # About order, not absence (set_device called too late): a ``satisfied_by`` call elsewhere does not clear it.
    stands_when_satisfied: bool = False
    # "info" for advice the code alone cannot prove to be a defect (the finding's own severity otherwise).
    severity: str | None = None


class Checker:
    """Base class: set ``id``; override :meth:`check`."""

    id = ""
    distributed_only = True
    triggers: tuple[str, ...] = DISTRIBUTED_TRIGGERS
    # Pattern list: when any file of the scan calls one of these, the pitfall is avoided project-wide.
    satisfied_by: str | None = None

    def check(self, m: ModuleIndex) -> Iterable[Hit]:
        """Yield the hits of this pitfall in module ``m``."""
        raise NotImplementedError

    def check_handled(self, m: ModuleIndex) -> Iterable[Hit]:
        """Hits in a file whose framework takes care of this pitfall (``handles`` in frameworks.yaml): only what
        never reaches the framework. None by default."""
        return ()


_MODULES = (
    "dataparallel", "ddp_before_to_device", "missing_distributed_sampler", "shuffle_with_sampler",
    "missing_set_epoch", "batchnorm_not_synced", "loss_not_on_device", "hardcoded_cuda0", "unsynced_init_seed",
    "grad_accum_without_no_sync", "unnecessary_find_unused_parameters", "checkpoint_without_module",
    "no_barrier_before_checkpoint_load", "logging_from_all_ranks", "uneven_last_batch",
    "mixed_sync_async_collectives", "destroy_process_group_missing", "gradient_checkpointing_conflict",
    "missing_set_device", "collective_mismatch", "unsynced_dropout_rng", "nccl_tuning_before_profiling",
    "hf_cache_contention", "cpu_oversubscribed", "unused_parameters_error", "batch_size_mismatch",
)


def all_checkers() -> list[Checker]:
    """An instance of every built-in checker, in table order."""
    out = []
    for name in _MODULES:
        module = importlib.import_module(f"troubleshooter.scan.checkers.{name}")
        out.append(module.CHECKER)
    return out
