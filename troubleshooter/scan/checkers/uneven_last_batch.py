"""uneven-last-batch: a dataset sharded by hand per rank, so ranks run different numbers of steps."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import (
    dataloaders, dataset_name, loader_label, local_callee, split_by_rank, wrapper_names,
)
from troubleshooter.scan.model import Binding, const, dotted, source


class UnevenLastBatchChecker(Checker):
    """Rank-sliced datasets feeding a DDP loop with no Join context."""

    id = "uneven-last-batch"

    def check(self, m):
        wrappers = wrapper_names(m)
        if not wrappers or m.calls_named(m.P.join_contexts) or any(
                s.method == "join" and s.recv in wrappers for s in m.calls):
            return
        model = next(iter(wrappers))
        for site in dataloaders(m):
            dataset = dataset_name(site)
            binding = m.binding(dataset, site.line, site.ctx.func) if dataset else None
            given = site.arg(0, "dataset")
            if isinstance(given, ast.Call) and m.mentions_rank(given):  # DataLoader(Subset(data, parts[rank]))
                binding, dataset = Binding(source(given), given, site.line, site.ctx.func, site.ctx), source(given)
            elif isinstance(given, ast.Call):  # ``ids = np.array_split(order, world)[rank]``; ``Subset(data, ids)``
                picked = next((b for n in ast.walk(given) if isinstance(n, ast.Name) and n is not given.func
                               and (b := m.binding(n.id, site.line, site.ctx.func)) is not None
                               and isinstance(b.value, ast.Subscript) and m.mentions_rank(b.value.slice)
                               and not any(isinstance(d, ast.BinOp) and isinstance(d.op, ast.FloorDiv)
                                           for d in ast.walk(b.value))), None)  # ``[: n // world * world]``: even
                if picked is not None:
                    binding, dataset = picked, source(given)
            if site.rank0 or binding is None:
                continue
            made = m.value_call(binding.value, binding.line + 1, binding.func)
            by_rank = (split_by_rank(m, binding.value) and not self._rank_only_tested(m, made)) or (
                made is not None and made.method in ("shard", "split_dataset_by_node"))
            if not by_rank or (site.assigned_to and self._endless(m, site.assigned_to)):
                continue
            loader = loader_label(site)
            yield Hit(site.line, f"{dataset} is split by rank by hand (line {binding.line}): when its length does not "
                                 f"divide evenly the ranks run different numbers of steps and the last "
                                 f"{model} all-reduce waits forever; use a DistributedSampler or "
                                 f"`with {model}.join():`", {"model": model, "loader": loader, "dataset": dataset})
        yield from self._hand_partitioned_loops(m, model)
        yield from self._rank_sharding_samplers(m, model)
        yield from self._local_rank_samplers(m, model)
        yield from self._random_sized_datasets(m, model)

    @staticmethod
    def _random_sized_datasets(m, model: str):
        """A DistributedSampler over a dataset a local function builds from a random draw (``n =
        random.randint(...)``; ``Subset(pool, random.sample(range(len(pool)), n))``) while nothing seeds the random
        generators alike on every rank: each process draws its own size, DistributedSampler gives the ranks
        different numbers of batches and the last all-reduce waits (Lightning#9851). Quiet when a seed call with an
        argument that does not mention the rank runs in the file."""
        seeds = [s for s in m.calls if s.name in m.P.seed_calls or s.name in m.P.host_seed_calls
                 or s.method in m.P.seed_methods]
        if any(not any(m.mentions_rank(a) for a in [*s.node.args, *s.node.keywords]) for s in seeds):
            return
        for site in m.calls_named(m.P.distributed_samplers):
            name = dotted(site.arg(0, "dataset"))
            binding = m.binding(name, site.line, site.ctx.func) if name else None
            made = m.value_call(binding.value, binding.line + 1, binding.func) if binding is not None else None
            func = local_callee(m, made) if made is not None else None
            if func is None:
                continue
            draw = next((n for n in m.nodes_in(func.node) if isinstance(n, ast.Call)
                         and m.qual(n.func) in m.P.random_draws
                         and m.qual(n.func).startswith(("random.", "numpy.random."))), None)  # not tensor values
            if draw is None:
                continue
            yield Hit(site.line, f"{name} comes from {func.name}(), which draws at random (line {draw.lineno}) with no "
                                 "seed shared by the ranks: each process builds a dataset of its own size, so "
                                 f"DistributedSampler gives the ranks different numbers of batches and the last {model} "
                                 "all-reduce waits forever; seed every rank alike before building it (or build it on "
                                 "rank 0 and broadcast)", {"model": model, "loader": name, "dataset": name})
            return

    @staticmethod
    def _local_rank_samplers(m, model: str):
        """A sampler class of this file that picks this rank's indices itself (``range(rank, n, world_size)``, a
        ``ceil`` chunk cut at the end) without evening the ranks out: nothing pads the last rank or drops the
        remainder (no floor division, no ``total_size`` / padding / ``drop_last``), so the ranks get different numbers
        of batches. A subclass of DistributedSampler pads like it."""
        for site in dataloaders(m):
            given = site.kw("sampler") or site.kw("batch_sampler")
            if isinstance(given, (ast.Name, ast.Attribute)):
                binding = m.binding(dotted(given), site.line, site.ctx.func)
                given = binding.value if binding is not None else None
            if not (isinstance(given, ast.Call) and isinstance(given.func, ast.Name) and given.func.id in m.classes):
                continue
            cls = m.classes[given.func.id]
            if any(m.qual(base) in m.P.distributed_samplers for base in cls.bases) or not (
                    m.mentions_rank(cls) or any(m.mentions_rank(a) for a in [*given.args, *given.keywords])):
                continue
            if not any(isinstance(n, ast.Subscript) or isinstance(n, ast.Call) and dotted(n.func) == "range"
                       for n in ast.walk(cls)) or _evens_ranks(cls):
                continue
            yield Hit(site.line, f"{cls.name} picks each rank's indices itself without evening the ranks out (no "
                                 "padding, no dropped remainder): when the data does not divide evenly the ranks run "
                                 f"different numbers of steps and the last {model} all-reduce waits forever; pad like "
                                 f"DistributedSampler, drop the remainder or use `with {model}.join():`",
                      {"model": model, "loader": loader_label(site), "dataset": cls.name})
            return

    @staticmethod
    def _rank_only_tested(m, made) -> bool:
        """``load_examples(path, local_rank)``: a local function handed the rank as a plain argument that it only
        tests (rank 0 builds a cache first behind barriers) returns the same data on every rank: not a split."""
        func = local_callee(m, made) if made is not None else None
        if func is None or not isinstance(func.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        params = [a.arg for a in func.node.args.posonlyargs + func.node.args.args]
        if func.cls is not None and made.recv is not None:
            params = params[1:]  # self
        given = [*zip(params, made.node.args), *((kw.arg, kw.value) for kw in made.node.keywords if kw.arg)]
        ranked = [(name, value) for name, value in given if m.mentions_rank(value)]
        if not ranked or any(not isinstance(value, (ast.Name, ast.Attribute)) for _, value in ranked):
            return False  # ``load(parts[rank])``: the argument itself is a per-rank piece
        names = {name for name, _ in ranked}
        tests = [n.test for n in ast.walk(func.node) if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert))]
        in_tests = {id(n) for test in tests for n in ast.walk(test)}
        return all(id(n) in in_tests for n in ast.walk(func.node) if isinstance(n, ast.Name) and n.id in names)

    @staticmethod
    def _rank_sharding_samplers(m, model: str):
        """A sampler that shards the data by rank itself (``DynamicBucketingSampler(cuts, rank=rank,
        world_size=world_size)``) and is told to keep the last partial batches (``drop_last`` set, not to True): unlike
        DistributedSampler it does not pad, so ranks can get different numbers of batches."""
        samplers = m.P.distributed_samplers | m.P.dataloaders
        for site in m.calls:
            if site.name in samplers or site.rank_conditional or not site.method.endswith("Sampler"):
                continue
            rank, drop_last = site.kw("rank"), site.kw("drop_last")
            if rank is None or not m.mentions_rank(rank) or drop_last is None or const(drop_last) is True:
                continue  # (a sampler left at its default may pad like DistributedSampler: not judged)
            if site.method in m.classes or (m.project is not None and site.method in m.project.classes):
                continue  # the project's own sampler: it may pad the ranks itself
            yield Hit(site.line, f"{site.method} splits the data by rank itself and keeps partial batches "
                                 "(drop_last is not True): the ranks can get different numbers of batches and the "
                                 f"last {model} all-reduce waits forever; pass drop_last=True or use "
                                 f"`with {model}.join():`", {"model": model, "loader": site.method, "dataset": "data"})
            return

    @staticmethod
    def _endless(m, loader: str) -> bool:
        """The loader feeds an endless generator (``while True: yield from loader``): no rank runs out of batches."""
        for loop in m.loops:
            node = loop.node
            if not (isinstance(node, ast.While) and const(node.test) is True):
                continue
            for sub in ast.walk(node):
                if isinstance(sub, ast.YieldFrom) and dotted(sub.value) == loader:
                    return True
                if isinstance(sub, ast.For) and dotted(sub.iter) == loader and any(
                        isinstance(y, (ast.Yield, ast.YieldFrom)) for y in ast.walk(sub)):
                    return True
        return False

    @staticmethod
    def _hand_partitioned_loops(m, model: str):
        """A training loop over data a local helper (or a slice) partitioned by rank: ``mine = partition(items,
        rank, world_size)`` ... ``for batch in mine.split(10):``."""
        loaders = m.P.dataloaders | m.P.distributed_samplers
        for loop in m.loops:
            if not m.is_training_loop(loop.node):
                continue
            for name in sorted(loop.iter_names):
                root = name.split(".")[0]
                binding = m.binding(root, loop.node.lineno, loop.ctx.func)
                if binding is None:
                    continue
                value = binding.value
                made = m.site_of(value) if isinstance(value, ast.Call) else None
                callee = local_callee(m, made) if made is not None and made.name not in loaders else None
                partitioned = (isinstance(value, ast.Subscript) and m.mentions_rank(value.slice)) or (
                    callee is not None and any(m.is_rank_expr(a) for a in made.node.args)
                    # create_dataloader(path, rank) building a DistributedSampler: sharded by the sampler
                    and not any(s.name in loaders for s in m.sites_in(callee.node)))
                if partitioned:
                    yield Hit(loop.node.lineno, f"{root} is split by rank by hand (line {binding.line}): when its length "
                                                f"does not divide evenly the ranks run different numbers of steps and "
                                                f"the last {model} all-reduce waits forever; use a DistributedSampler "
                                                f"or `with {model}.join():`",
                              {"model": model, "loader": root, "dataset": root})
                    return


CHECKER = UnevenLastBatchChecker()


def _evens_ranks(cls: ast.ClassDef) -> bool:
    """The sampler evens the ranks out: a floor division (``n // world_size``), a padding append (``indices +=
    indices[:pad]``), or a ``total_size`` / ``pad`` / ``drop_last`` name."""
    for node in ast.walk(cls):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            return True
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(
                node.value, (ast.Subscript, ast.BinOp, ast.List, ast.ListComp)):
            return True
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else \
            node.arg if isinstance(node, ast.arg) else None
        if name and any(word in name.lower() for word in ("total_size", "pad", "drop_last")):
            return True
    return False
