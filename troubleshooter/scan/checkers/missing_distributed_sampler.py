"""missing-distributed-sampler: a training DataLoader in a DDP script without a DistributedSampler."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import dataloaders, dataset_name, loader_label, truthy_literal
from troubleshooter.scan.model import const


class MissingDistributedSamplerChecker(Checker):
    """A loader that trains (shuffle=True, a ``train`` name, or iterated around ``backward()``) with no sampler."""

    id = "missing-distributed-sampler"

    def check(self, m):
        if m.calls_to(m.P.loader_sharders):
            return
        for site in dataloaders(m):
            sampler = site.kw("sampler") or site.kw("batch_sampler")
            if sampler is not None and const(sampler, default=...) is not None:
                continue
            if len(site.node.args) > 2 or site.rank0 or any(k.arg is None for k in site.node.keywords):
                continue  # positional sampler / **kwargs: cannot tell
            dataset = dataset_name(site)
            if dataset and self._sharded_or_iterable(m, dataset, site):
                continue
            if not self._trains(m, site):
                continue
            loader = loader_label(site)
            yield Hit(site.line, f"{loader} has no DistributedSampler: every rank iterates all of "
                                 f"{dataset or 'the dataset'} in the same order, so the ranks train on the same "
                                 "batches and an epoch does no more work than on one GPU",
                      {"loader": loader, "dataset": dataset or "dataset", "sampler": "sampler"})

    @staticmethod
    def _sharded_or_iterable(m, dataset: str, site) -> bool:
        binding = m.binding(dataset, site.line, site.ctx.func)
        if binding is None:
            return False
        if m.mentions_rank(binding.value):
            return True
        made = m.value_call(binding.value, binding.line + 1, binding.func)
        if made is None:
            return False
        if "Iterable" in made.method or made.method in m.P.loader_sharders:
            return True
        cls = m.classes.get(made.method)
        return bool(cls) and any("Iterable" in (ast.unparse(b)) for b in cls.bases)

    @staticmethod
    def _trains(m, site) -> bool:
        if truthy_literal(site.kw("shuffle")):
            return True
        name = site.assigned_to
        if not name:
            return False
        if "train" in name.lower():
            return True
        for loop in m.loops:
            if name in loop.iter_names and any(s.method == "backward" for s in m.sites_in(loop.node)):
                return True
        return False


CHECKER = MissingDistributedSamplerChecker()
