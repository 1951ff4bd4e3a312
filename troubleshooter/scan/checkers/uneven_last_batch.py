"""uneven-last-batch: a dataset sharded by hand per rank, so ranks run different numbers of steps."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import (
    argument_given, callers_of, collective_names, dataloaders, dataset_name, loader_label, local_callee,
    split_by_rank, takes_parameter, value_returns, wrapper_names,
)
from troubleshooter.scan.model import Binding, const, dotted, source


class UnevenLastBatchChecker(Checker):
    """Rank-sliced datasets feeding a DDP loop with no Join context."""

    id = "uneven-last-batch"

    def check(self, m):
        wrappers = wrapper_names(m)
        if m.calls_named(m.P.join_contexts) or any(s.method == "join" and s.recv in wrappers for s in m.calls):
            return
        if not wrappers:
            yield from _sharded_steps_with_collective(m)
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


def _evens_ranks(cls: ast.AST) -> bool:
    """The sampler (or the function that splits the data) evens the ranks out: a floor division (``n //
    world_size``), a remainder of the length by the world size (``while len(indices) % world_size != 0:
    indices.extend(...)``), a padding append (``indices += indices[:pad]``), or a ``total_size`` / ``pad`` /
    ``drop_last`` name."""
    for node in ast.walk(cls):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Call) \
                and dotted(node.left.func) == "len":
            return True
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(
                node.value, (ast.Subscript, ast.BinOp, ast.List, ast.ListComp)):
            return True
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else \
            node.arg if isinstance(node, ast.arg) else None
        if name and any(word in name.lower() for word in ("total_size", "pad", "drop_last")):
            return True
    return False


_SPLIT_DEPTH = 8  # names, arguments and local returns followed from a loop's iterable back to a rank split


def _sharded_steps_with_collective(m):
    """No DDP, but a loop that runs a collective on every step (``dist.barrier()``, an all-reduce) over data split by
    rank by hand (``files[rank::world_size]``, ``np.array_split(items, world)[rank]``; through a dataset, a loader,
    a local function or method that returns the slice, or a parameter its callers pass it in): when the data does
    not divide evenly one rank runs a step fewer and the others wait in that step's collective (dlio_benchmark#339).
    A split evened out first (a floor division of the length) is left alone."""
    names = collective_names(m)
    for loop in m.loops:
        node = loop.node
        if not isinstance(node, (ast.For, ast.AsyncFor)) or loop.ctx.sides:
            continue
        joined = next((s for s in m.sites_in(node) if s.name in names and s.ctx.loops and s.ctx.loops[-1] is node
                       and not s.ctx.sides and s.kw("group") is None), None)  # a subgroup's ranks may share data
        if joined is None:
            continue
        split = _rank_split_source(m, node.iter, node.lineno, loop.ctx.func, _SPLIT_DEPTH, set())
        if split is None:
            continue
        yield Hit(joined.line, f"{joined.method} runs on every step of a loop over data split by rank by hand "
                               f"(`{source(split)}`, line {split.lineno}): when it does not divide evenly one rank "
                               f"runs a step fewer and the others wait in its {joined.method} until the timeout; even "
                               "the shards out (drop the remainder or pad) or use a DistributedSampler",
                  {"model": "", "loader": ast.unparse(node.iter), "dataset": source(split)})
        return


def _rank_split_source(m, node, line: int, func, depth: int, seen: set[int]):
    """The rank-sliced expression (``files[self.rank::self.world_size]``) ``node`` is built from, followed through
    names bound in ``func``, the arguments of the calls it makes, the returns of local functions and methods, and
    the values callers pass a parameter; None when there is none or the split is evened out (a floor division).
    ``seen``: the nodes already followed (each once per loop)."""
    if node is None or depth < 0 or id(node) in seen:
        return None
    seen.add(id(node))
    if isinstance(node, ast.Subscript) and m.mentions_rank(node.slice):
        return None if _evened(m, node, line, func) else node
    if isinstance(node, ast.Call):
        made = m.site_of(node)
        callee = local_callee(m, made) if made is not None else None
        if callee is not None and not m.is_rank_expr(node):
            for ret in value_returns(m, callee):
                found = _rank_split_source(m, ret.value, ret.lineno, callee, depth - 1, seen)
                if found is not None:
                    return found
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            found = _rank_split_source(m, arg, line, func, depth - 1, seen)
            if found is not None:
                return found
        if isinstance(node.func, ast.Attribute):  # ``enumerate(loader)`` / ``ds.split(10)``: the object it reads
            return _rank_split_source(m, node.func.value, line, func, depth - 1, seen)
        return None
    name = dotted(node)
    if not name:
        return None
    binding = m.binding(name, line, func)
    if binding is not None:
        return _rank_split_source(m, binding.value, binding.line, binding.func, depth - 1, seen)
    if func is not None and takes_parameter(func, name):
        for caller in callers_of(m, func):
            given = argument_given(func, name, caller.node)
            found = _rank_split_source(m, given, caller.line, caller.ctx.func, depth - 1, seen)
            if found is not None:
                return found
    return None


def _evened(m, split: ast.Subscript, line: int, func) -> bool:
    """The rank's slice has one length on every rank: a floor division in it or in a name it reads
    (``per_rank = len(paths) // world_size``; ``paths[rank * per_rank:(rank + 1) * per_rank]``), or the sequence it
    slices was padded first (``while len(indices) % world_size != 0: indices.extend(...)`` before
    ``indices[rank::world_size]``)."""
    values = [split, *(b.value for n in ast.walk(split.slice) if isinstance(n, ast.Name)
                       and (b := m.binding(n.id, line, func)) is not None)]
    if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv) for v in values for n in ast.walk(v)):
        return True
    base = dotted(split.value)
    scope = func.node if func is not None else m.tree
    return bool(base) and any(
        isinstance(stmt, ast.stmt) and stmt is not scope and stmt.lineno < line and _evens_ranks(stmt)
        and any(dotted(n) == base for n in ast.walk(stmt)) for stmt in m.nodes_in(scope))
