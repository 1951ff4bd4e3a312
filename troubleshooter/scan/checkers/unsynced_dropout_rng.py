"""unsynced-dropout-rng: random state that must match across ranks differs (a random branch in a DDP forward, a
per-rank DistributedSampler seed)."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import wrapped_name
from troubleshooter.scan.checkers._modules import wrapped_classes
from troubleshooter.scan.model import const, dotted


class UnsyncedDropoutRngChecker(Checker):
    """``if random.random() < p:`` (layer drop, stochastic depth) in the forward of a DDP-wrapped model; a
    DistributedSampler seeded differently on each rank."""

    id = "unsynced-dropout-rng"

    def check(self, m):
        yield from _per_rank_sampler_seeds(m)
        for wrap, cls in wrapped_classes(m):
            model = wrapped_name(wrap) or "model"
            for line, test in cls.random_branches:
                yield Hit(line, f"{cls.name}.forward branches on `{test}`: each rank draws its own random number, "
                                f"so ranks skip different layers and DDP({model})'s gradient buckets diverge "
                                "(hang or 'Expected to have finished reduction')",
                          {"model": model, "variable": test})


def _per_rank_sampler_seeds(m):
    """``DistributedSampler(ds, seed=args.seed + rank)`` / ``seed=int(time.time())``: the sampler's shuffle must be
    the same permutation on every replica (each takes its own slice of it); a seed from the rank or the process's own
    clock gives each rank another permutation, so samples overlap between ranks and others are never seen."""
    for site in m.calls_named(m.P.distributed_samplers):
        seed = site.kw("seed")
        if seed is None or const(site.kw("shuffle"), default=True) is False:
            continue
        value, func = seed, site.ctx.func
        for _ in range(3):  # ``seed = base + rank`` bound before the call
            name = dotted(value)
            binding = m.binding(name, site.line, func) if name else None
            if binding is None:
                break
            value = binding.value
        if m.mentions_rank(value) or any(isinstance(n, ast.Call) and m.qual(n.func) in m.P.clock_calls
                                         for n in ast.walk(value)):
            yield Hit(site.line, f"DistributedSampler seed `{ast.unparse(seed)}` differs between ranks (it reads the "
                                 "rank or this process's clock): every replica must shuffle with the same seed to "
                                 "take its own slice of one permutation, else samples overlap between ranks and "
                                 "others are skipped; pass the same seed on every rank", {"variable": ast.unparse(seed)})


CHECKER = UnsyncedDropoutRngChecker()
