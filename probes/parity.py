"""Parity probe: do the ranks of a DDP run on the user's model agree, and does DDP equal one process?

On the user's ``--model`` (and ``--data``), in the world the tool runs:

1. Replica consistency: a digest of every parameter and buffer on every rank right after the DDP
   wrap and after ``STEPS`` optimizer steps; tensors whose digests differ get their exact max abs
   difference across ranks (an all_reduce MAX and MIN), and the ranks are grouped by digest.
2. Gradient agreement: after one backward on different data per rank, DDP's all-reduced gradients
   must be identical on every rank.
3. Single-process parity: the first DDP step (N ranks, per-rank batch b) against one process on the
   concatenated N·b batch from the same weights, on rank 0, with ``torch.distributed`` made to look
   like a world of one. Loss ratio, gradient relative error, norm ratio and cosine.
4. Data sharding (``--data`` returning a DataLoader): the indices each rank's sampler yields in one
   epoch (never the samples), overlap and coverage across ranks, and whether the order repeats
   in the next epoch.

Per-rank batches are rank 0's batch with seeded noise (floats) or a seeded shuffle of the values
(integers), so rank 0 can rebuild every rank's batch for the single-process reference.
Cross-rank comparisons are reported by rank 0; every rank reports its own loss.
"""

from __future__ import annotations

import contextlib
import copy
import fnmatch
import math
import os
from typing import Any, Callable

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.probe import WORLD, Probe, ProbeContext, ProbeResult

STEPS = 3  # optimizer steps between the two consistency snapshots
LR = 0.01
WEIGHT_PERIOD = 8191  # digest weights repeat with this period (a prime)
RANDOM_TRIES = 3  # forwards of one input (nn.Dropout off) that must agree for the model to count as deterministic
NOISE = 0.5  # per-rank noise on float inputs, in units of the input's standard deviation
RANK_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")


# -- batches ---------------------------------------------------------------------------------------

def map_tensors(value: Any, fn: Callable[[Any], Any]) -> Any:
    """``value`` with ``fn`` applied to every tensor inside tuples, lists and dicts."""
    import torch

    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(map_tensors(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    return value


def zip_tensors(values: list[Any], fn: Callable[[list[Any]], Any]) -> Any:
    """Combine same-shaped structures: ``fn`` gets the list of tensors found at each position."""
    import torch

    first = values[0]
    if isinstance(first, torch.Tensor):
        return fn(values)
    if isinstance(first, (list, tuple)):
        return type(first)(zip_tensors(list(group), fn) for group in zip(*values))
    if isinstance(first, dict):
        return {k: zip_tensors([v[k] for v in values], fn) for k in first}
    return first


def tensors_in(value: Any) -> list[Any]:
    """The tensors inside ``value``, depth first."""
    found: list[Any] = []
    map_tensors(value, lambda t: found.append(t) or t)
    return found


def perturbed(batch: Any, seed: int) -> Any:
    """A different but valid batch: floats plus seeded noise, integers shuffled among their own values."""
    import torch

    from troubleshooter.run.user_code import Batch

    generator = torch.Generator().manual_seed(seed)

    def change(t: Any) -> Any:
        if t.is_floating_point():
            scale = float(t.float().std()) if t.numel() > 1 else 1.0
            noise = torch.randn(t.shape, generator=generator, dtype=torch.float32)
            return t + (noise * NOISE * (scale if math.isfinite(scale) and scale > 0 else 1.0)).to(t.device, t.dtype)
        if t.dtype == torch.bool or t.numel() < 2:
            return t
        order = torch.randperm(t.numel(), generator=generator).to(t.device)
        return t.reshape(-1)[order].reshape(t.shape)

    return Batch(map_tensors(batch.args, change), map_tensors(batch.kwargs, change), batch.samples, batch.tokens)


def concatenated(batches: list[Any]) -> Any:
    """One batch holding every rank's batch along the batch dimension (other tensors from the first)."""
    import torch

    from troubleshooter.run.user_code import Batch

    samples = batches[0].samples

    def cat(group: list[Any]) -> Any:
        if group[0].dim() >= 1 and group[0].shape[0] == samples:
            return torch.cat(group)
        return group[0]

    return Batch(zip_tensors([b.args for b in batches], cat), zip_tensors([b.kwargs for b in batches], cat),
                 samples * len(batches), None)


def broadcast_batch(batch: Any) -> None:
    """Overwrite every rank's batch with rank 0's, in place (ranks may have drawn different first batches)."""
    import torch
    import torch.distributed as dist

    from troubleshooter.run.in_rank import all_gather_json

    tensors = tensors_in((batch.args, batch.kwargs))
    layout = all_gather_json([[list(t.shape), str(t.dtype)] for t in tensors])
    if any(shape != layout[0] for shape in layout):
        for i, (shape, _) in enumerate(layout[0]):
            tensors[i].data = torch.empty(shape, dtype=tensors[i].dtype, device=tensors[i].device)
    for t in tensors:
        dist.broadcast(t.data, src=0)


# -- digests and cross-rank comparison -------------------------------------------------------------

_WEIGHTS: dict[Any, Any] = {}


def digest(t: Any) -> str:
    """Plain and position-weighted sums of ``t`` (floats in their own precision, others in float64), as hex.

    Equal tensors give equal digests on ranks that reduce in the same order; a difference that
    rounding alone produced is removed later by the exact comparison (:func:`max_abs_diff`).
    """
    import torch

    x = t.detach().reshape(-1)
    x = x.float() if x.is_floating_point() and x.dtype not in (torch.float32, torch.float64) else \
        x if x.is_floating_point() else x.to(torch.float64)
    key = (x.device, x.dtype)
    if key not in _WEIGHTS or _WEIGHTS[key].numel() < x.numel():
        _WEIGHTS[key] = (torch.arange(max(x.numel(), 1), device=x.device) % WEIGHT_PERIOD + 1).to(x.dtype)
    return f"{float(x.sum()).hex()}:{float(torch.dot(x, _WEIGHTS[key][: x.numel()])).hex()}"


def groups(values: list[Any]) -> list[list[int]]:
    """Ranks grouped by equal value, largest group first."""
    by_value: dict[str, list[int]] = {}
    for rank, value in enumerate(values):
        by_value.setdefault(repr(value), []).append(rank)
    return sorted(by_value.values(), key=lambda g: (-len(g), g[0]))


def max_abs_diff(tensors: list[Any]) -> list[float]:
    """Per tensor, the largest elementwise difference between any two ranks (collective on every rank)."""
    import torch
    import torch.distributed as dist

    flat = torch.cat([t.detach().reshape(-1).to(torch.float64) for t in tensors])
    high, low = flat.clone(), -flat
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    dist.all_reduce(low, op=dist.ReduceOp.MAX)
    spread = high + low
    out, start = [], 0
    for t in tensors:
        part = spread[start:start + t.numel()]
        out.append(float(part.max()) if part.numel() else 0.0)
        start += t.numel()
    return out


def compare(named: dict[str, Any]) -> dict[str, Any]:
    """Compare ``{name: tensor or None}`` across ranks (call on every rank; same answer everywhere).

    Returns ``present`` (names on every rank), ``partial`` (names on some ranks only), ``differ``
    (names whose values differ, in ``named`` order), ``diff`` (name -> max abs difference) and
    ``agree`` (name -> ranks grouped by equal value).
    """
    from troubleshooter.run.in_rank import all_gather_json

    mine = {n: (None if t is None else [list(t.shape), str(t.dtype), digest(t)]) for n, t in named.items()}
    everyone = all_gather_json(mine)
    order = list(dict.fromkeys(n for table in everyone for n in table))
    present = [n for n in order if all(table.get(n) is not None for table in everyone)]
    partial = [n for n in order if n not in present and any(table.get(n) is not None for table in everyone)]
    differ = [n for n in present if len({repr(table[n]) for table in everyone}) > 1]
    comparable = [n for n in differ if len({repr(table[n][:2]) for table in everyone}) == 1]
    diffs = dict(zip(comparable, max_abs_diff([named[n] for n in comparable]))) if comparable else {}
    differ = [n for n in differ if diffs.get(n, 1.0) != 0.0]  # digests that differ by reduction order only
    return {"present": present, "partial": partial, "differ": differ, "diff": diffs,
            "agree": {n: groups([table[n] for table in everyone]) for n in differ},
            "missing_on": {n: [r for r, table in enumerate(everyone) if table.get(n) is None] for n in partial}}


# -- the model -------------------------------------------------------------------------------------

def state(model: Any) -> dict[str, Any]:
    """Every parameter and buffer by module path."""
    return {**dict(model.named_parameters()), **dict(model.named_buffers())}


def owner(model: Any, name: str) -> Any:
    """The module that holds tensor ``name``."""
    path = name.rpartition(".")[0]
    return model.get_submodule(path) if path else model


def batchnorm_paths(model: Any) -> list[str]:
    """Module paths of BatchNorm layers that compute statistics per rank (not SyncBatchNorm)."""
    from torch.nn.modules.batchnorm import _BatchNorm
    from torch.nn import SyncBatchNorm

    return [n or "(root)" for n, m in model.named_modules() if isinstance(m, _BatchNorm) and not isinstance(m, SyncBatchNorm)]


def dropout_modules(model: Any) -> list[Any]:
    """The nn.Dropout-family modules of ``model``."""
    from torch.nn.modules.dropout import _DropoutNd

    return [m for m in model.modules() if isinstance(m, _DropoutNd)]


@contextlib.contextmanager
def buffers_kept(model: Any):
    """Run a block without leaving its buffer updates (BatchNorm running statistics) behind."""
    saved = {n: b.detach().clone() for n, b in model.named_buffers()}
    try:
        yield
    finally:
        for n, b in model.named_buffers():
            if n in saved and saved[n].shape == b.shape:
                b.data.copy_(saved[n])


@contextlib.contextmanager
def modules_run(model: Any, seen: list[str]):
    """Record the paths of the modules whose forward runs inside the block."""
    handles = [m.register_forward_hook(lambda *_a, _n=n: seen.append(_n)) for n, m in model.named_modules() if n]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def single_process_view():
    """Make ``torch.distributed`` and the rank variables look like a world of one process.

    Applies to code that looks these up at call time (``dist.get_world_size()``, ``os.environ``);
    a name imported earlier with ``from torch.distributed import get_world_size`` is not covered.
    """
    import torch.distributed as dist

    saved = {name: getattr(dist, name) for name in ("is_initialized", "get_world_size", "get_rank")}
    env = {k: os.environ.get(k) for k in RANK_VARS}
    dist.is_initialized = lambda: False
    dist.get_world_size = lambda group=None: 1
    dist.get_rank = lambda group=None: 0
    os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1")
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(dist, name, fn)
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def may_differ_patterns(model: Any, options: Any) -> list[str]:
    """Names whose cross-rank difference is legitimate: the model's ``parity_may_differ`` plus the rules'."""
    from troubleshooter.core.ruleset import load_rules

    patterns = [str(p) for p in getattr(model, "parity_may_differ", None) or ()]
    expectations = load_rules(options.get("rules") or [], only=("expectations",)).expectations
    return patterns + [str(p) for p in (expectations.get("parity") or {}).get("may_differ") or []]


def local_loss_step(ddp: Any, batch: Any) -> float:
    """Zero the gradients, one forward and backward; the loss."""
    from troubleshooter.run import user_code

    ddp.zero_grad(set_to_none=True)
    return float(user_code.step(ddp, batch).detach())


# -- data sharding ---------------------------------------------------------------------------------

def drawn_indices(sampler: Any) -> list[int]:
    """The dataset indices a (batch) sampler yields in one pass, flattened."""
    out: list[int] = []
    for item in sampler:
        if isinstance(item, (list, tuple)):
            out.extend(int(i) for i in item)
        else:
            out.append(int(item))
    return out


def sharding(options: Any) -> dict[str, Any]:
    """Facts about how the ``--data`` loader's sampler splits one epoch across ranks (collective)."""
    import torch

    from troubleshooter.run import user_code
    from troubleshooter.run.in_rank import all_gather_json

    facts: dict[str, Any] = {}
    try:
        data = user_code.resolve(options["data"], options.get("cwd"))()
        sampler = getattr(data, "batch_sampler", None) or getattr(data, "sampler", None)
        if not isinstance(data, torch.utils.data.DataLoader) or sampler is None:
            mine = {"error": f"--data returned a {type(data).__name__}, not a DataLoader with a sampler: "
                             "the probe sees no sampler to check"}
        else:
            base = getattr(data, "sampler", sampler)
            first, second = drawn_indices(sampler), drawn_indices(sampler)
            changes = None
            if callable(getattr(base, "set_epoch", None)):
                base.set_epoch(1)
                changes = drawn_indices(sampler) != first
                base.set_epoch(0)
            mine = {"indices": first, "repeats": first == second, "shuffles": first != sorted(first),
                    "sampler": type(base).__name__, "set_epoch_changes": changes, "size": len(data.dataset)}
    except Exception as exc:  # the user's data factory: report, keep the collective sequence intact
        mine = {"error": f"{type(exc).__name__}: {exc}".splitlines()[0][:300]}
    everyone = all_gather_json(mine)
    errors = [e["error"] for e in everyone if "error" in e]
    if errors:
        return {"parity.sharding_error": errors[0]}
    seen: dict[int, int] = {}
    for entry in everyone:
        for index in set(entry["indices"]):
            seen[index] = seen.get(index, 0) + 1
    size = everyone[0]["size"]
    facts.update({
        "parity.sampler": everyone[0]["sampler"],
        "parity.shard_sizes": [len(e["indices"]) for e in everyone],
        "parity.shard_overlap_fraction": sum(1 for c in seen.values() if c > 1) / len(seen) if seen else 0.0,
        "parity.shard_coverage": len(seen) / size if size else 0.0,
        "parity.sampler_shuffles": any(e["shuffles"] for e in everyone),
        "parity.epoch_order_repeats": all(e["repeats"] for e in everyone),
    })
    if everyone[0]["set_epoch_changes"] is not None:
        facts["parity.set_epoch_changes_order"] = any(e["set_epoch_changes"] for e in everyone)
    return facts


# -- the probe -------------------------------------------------------------------------------------

class ParityProbe(Probe):
    """Replica consistency, gradient agreement, single-process parity and data sharding on the user's model."""

    id = "parity"
    title = "Ranks agree and DDP equals one process"
    scope = WORLD
    needs = ("torch", "process_group")
    timeout_s = 180.0
    order = 240
    default = False
    default_with = ("model",)
    produces = (
        FactSpec("parity.model_source", "str", "user (--model) or builtin"),
        FactSpec("parity.steps", "int", "Optimizer steps between the two consistency snapshots"),
        FactSpec("parity.tensors_compared", "int", "Parameters and buffers compared across ranks after the steps"),
        FactSpec("parity.local_loss", "float", "This rank's loss on its own batch in the first DDP step"),
        FactSpec("parity.differ_at_wrap", "list", "Parameters/buffers that differ across ranks right after the DDP wrap"),
        FactSpec("parity.params_differ", "list", "Parameters registered at the wrap that differ across ranks after "
                 "the steps"),
        FactSpec("parity.buffers_differ", "list", "Buffers (outside BatchNorm, not declared legitimate) that differ "
                 "across ranks after the steps"),
        FactSpec("parity.bn_buffers_differ", "list", "BatchNorm buffers that differ across ranks after the steps"),
        FactSpec("parity.legit_differ", "list", "Tensors that differ but are declared or recognised as per-rank "
                 "(model.parity_may_differ, rules/expectations.yaml parity.may_differ)"),
        FactSpec("parity.created_after_wrap", "list", "Parameters/buffers that did not exist at the DDP wrap"),
        FactSpec("parity.created_after_wrap_differ", "list", "Tensors created after the wrap that differ across ranks"),
        FactSpec("parity.partial_tensors", "list", "Tensors that exist on some ranks only"),
        FactSpec("parity.first_differing", "str", "First differing tensor (module path) after the steps"),
        FactSpec("parity.first_differing_module", "str", "Class of the module holding the first differing tensor"),
        FactSpec("parity.first_max_abs_diff", "float", "Max abs difference of the first differing tensor across ranks"),
        FactSpec("parity.first_agreeing_ranks", "list", "Ranks grouped by equal value of the first differing tensor"),
        FactSpec("parity.batchnorm_modules", "list", "BatchNorm modules that are not SyncBatchNorm"),
        FactSpec("parity.grads_differ", "list", "Parameters registered with DDP whose all-reduced gradient differs "
                 "across ranks"),
        FactSpec("parity.grads_unsynced", "list", "Parameters created after the wrap, whose gradient DDP never "
                 "all-reduces, that differ across ranks"),
        FactSpec("parity.grad_max_abs_diff", "float", "Largest gradient difference across ranks"),
        FactSpec("parity.grads_missing_on_some_ranks", "list", "Parameters with a gradient on some ranks only"),
        FactSpec("parity.params_without_grad", "list", "Parameters that require a gradient and got none on any rank "
                 "in the first step"),
        FactSpec("parity.stochastic_forward", "bool", "Training-mode forwards of the same input differ on some rank "
                 "(dropout or other randomness)"),
        FactSpec("parity.random_beyond_dropout", "bool", "With nn.Dropout off, forwards of the same input still differ "
                 "on some rank"),
        FactSpec("parity.rng_shared_across_ranks", "bool", "A random training-mode forward of the same input gives "
                 "identical outputs on every rank (identical random streams)"),
        FactSpec("parity.modules_run_differ", "list", "Modules that ran on some ranks but not others for the same input"),
        FactSpec("parity.reference_compared", "bool", "The DDP step was compared with one process on the whole batch"),
        FactSpec("parity.reference_skipped", "str", "Why the single-process comparison was not made"),
        FactSpec("parity.loss_ddp", "float", "Mean of the ranks' losses in the first DDP step"),
        FactSpec("parity.loss_single", "float", "Loss of one process on the concatenated batch"),
        FactSpec("parity.loss_ratio", "float", "loss_ddp / loss_single"),
        FactSpec("parity.update_rel_err", "float", "|g_ddp - g_single| / |g_single| over all registered parameters "
                 "(the SGD update direction)"),
        FactSpec("parity.update_norm_ratio", "float", "|g_ddp| / |g_single|"),
        FactSpec("parity.update_ratio_log_world", "float", "log(update_norm_ratio) / log(world size): +1 or -1 "
                 "when DDP's update is N or 1/N times the single-process one"),
        FactSpec("parity.update_cosine", "float", "Cosine between the DDP and single-process gradients"),
        FactSpec("parity.tolerance", "float", "Relative tolerance from the parameter dtype: sqrt(machine epsilon)"),
        FactSpec("parity.dtype", "str", "Parameter dtype the tolerance comes from"),
        FactSpec("parity.sampler", "str", "Class of the --data loader's sampler"),
        FactSpec("parity.shard_sizes", "list", "Indices each rank draws in one epoch, by rank"),
        FactSpec("parity.shard_overlap_fraction", "float", "Fraction of drawn samples that more than one rank draws"),
        FactSpec("parity.shard_coverage", "float", "Fraction of the data set drawn by some rank in one epoch"),
        FactSpec("parity.sampler_shuffles", "bool", "The sampler yields a shuffled order"),
        FactSpec("parity.epoch_order_repeats", "bool", "Iterating the loader again yields the same order on every rank"),
        FactSpec("parity.set_epoch_changes_order", "bool", "sampler.set_epoch(1) changes the order"),
        FactSpec("parity.sharding_error", "str", "Why the sharding could not be checked"),
        FactSpec("parity.error", "str", "Why the probe could not run"),
    )

    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Build, wrap, snapshot, step, compare; rank 0 reports the cross-rank facts."""
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        from troubleshooter.run import user_code
        from troubleshooter.run.in_rank import all_gather_json

        if not dist.is_initialized():
            return self.skip("no process group")
        n, rank = dist.get_world_size(), dist.get_rank()
        device = torch.device(ctx.device or "cpu")
        ctx.phase("build")
        try:
            loaded = user_code.load_model(ctx.options)
            model = loaded.module.to(device).train()
            batch = user_code.make_batch(model, ctx.options, device)
            error = ""
        except Exception as exc:  # every rank must agree before the first collective
            error = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        errors = [e for e in all_gather_json(error) if e]
        if errors:
            return self.result({"parity.error": errors[0]}, message="the parity check could not run")
        broadcast_batch(batch)
        facts: dict[str, Any] = {"parity.model_source": loaded.source, "parity.steps": STEPS}
        patterns = may_differ_patterns(model, ctx.options)
        dtype = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
        tolerance = math.sqrt(torch.finfo(dtype).eps)

        ctx.phase("wrap")
        ddp = DDP(model, device_ids=[device.index] if device.type == "cuda" else None, find_unused_parameters=True)
        registered = dict(model.named_parameters())
        at_wrap = compare(state(model))

        ctx.phase("same input")
        random_facts, random_beyond_dropout = self.randomness(model, batch)
        reference = copy.deepcopy(model) if rank == 0 and n > 1 else None

        ctx.phase("first step")
        dropouts = dropout_modules(model)
        for m in dropouts:  # nn.Dropout off for the comparable step (back on for the other steps)
            m.eval()
        batches = [perturbed(batch, 1000 + r) for r in range(n)]
        local_loss = local_loss_step(ddp, batches[rank])
        grads = compare({name: p.grad for name, p in registered.items()})
        losses = all_gather_json(local_loss)
        # the reference is a separate copy: these gradients stay untouched until optimizer.step()
        ddp_grads = {name: p.grad for name, p in registered.items() if p.grad is not None} \
            if reference is not None else {}
        ctx.phase("single-process reference")
        if reference is not None:
            try:
                facts.update(self.reference(reference, batches, ddp_grads, sum(losses) / n, n, tolerance,
                                            random_beyond_dropout))
            except Exception as exc:  # e.g. out of memory for N·b samples on one device: the rest still runs
                facts.update({"parity.reference_compared": False, "parity.reference_skipped":
                              f"the single-process step failed: {type(exc).__name__}: {exc}".splitlines()[0][:300]})
            del reference, ddp_grads
        for m in dropouts:
            m.train()
        optimizer = torch.optim.SGD(ddp.parameters(), lr=LR)
        optimizer.step()

        ctx.phase(f"{STEPS - 1} more steps")
        for s in range(1, STEPS):
            local_loss_step(ddp, perturbed(batch, 1000 + s * n + rank))
            optimizer.step()
        ctx.phase("compare replicas")
        after = compare(state(model))
        sharded = {}
        if ctx.options.get("data"):
            ctx.phase("sharding")
            sharded = sharding(ctx.options)
        if rank != 0:
            return self.result({"parity.local_loss": local_loss}, message="compared on rank 0")

        created = [name for name in [*after["present"], *after["partial"]] if name not in at_wrap["present"]
                   and name not in at_wrap["partial"]]
        legit = [name for name in after["differ"] if any(fnmatch.fnmatchcase(name, p) for p in patterns)]
        faults = [name for name in after["differ"] if name not in legit]
        bn = set(batchnorm_paths(model))
        buffers = dict(model.named_buffers())
        facts.update({
            "parity.local_loss": local_loss, "parity.tensors_compared": len(after["present"]),
            "parity.differ_at_wrap": [x for x in at_wrap["differ"] if x not in legit],
            "parity.created_after_wrap": created,
            "parity.created_after_wrap_differ": [x for x in faults if x in created],
            "parity.partial_tensors": after["partial"],
            "parity.params_differ": [x for x in faults if x in registered],
            "parity.bn_buffers_differ": [x for x in faults if x in buffers and x.rpartition(".")[0] in bn],
            "parity.buffers_differ": [x for x in faults if x in buffers and x not in created
                                      and x.rpartition(".")[0] not in bn],
            "parity.legit_differ": legit, "parity.batchnorm_modules": sorted(bn),
            "parity.grads_differ": grads["differ"],
            "parity.grads_missing_on_some_ranks": grads["partial"],
            "parity.params_without_grad": [x for x, p in registered.items() if p.requires_grad
                                           and x not in grads["present"] and x not in grads["partial"]],
            "parity.dtype": str(dtype).replace("torch.", ""), "parity.tolerance": tolerance,
            **random_facts, **sharded,
        })
        facts["parity.grads_unsynced"] = [x for x in faults if x in created and x in dict(model.named_parameters())]
        if grads["diff"]:
            facts["parity.grad_max_abs_diff"] = max(grads["diff"].values())
        if faults:
            first = faults[0]
            facts.update({"parity.first_differing": first,
                          "parity.first_differing_module": type(owner(model, first)).__name__,
                          "parity.first_agreeing_ranks": after["agree"][first]})
            if first in after["diff"]:
                facts["parity.first_max_abs_diff"] = after["diff"][first]
        return self.result(facts, message=self.summary(facts, n))

    @staticmethod
    def randomness(model: Any, batch: Any) -> tuple[dict[str, Any], bool]:
        """Training-mode forwards of the same input on every rank, once as is and ``RANDOM_TRIES`` times with
        nn.Dropout off: random at all? random beyond dropout? the same stream on every rank? the same modules?

        Returns the facts and whether the forward is random beyond nn.Dropout on some rank.
        """
        import torch

        from troubleshooter.run import user_code
        from troubleshooter.run.in_rank import all_gather_json

        outputs, ran = [], []
        dropouts = dropout_modules(model)
        with torch.no_grad(), buffers_kept(model):
            for attempt in range(1 + RANDOM_TRIES):
                for m in dropouts if attempt == 1 else ():
                    m.eval()
                seen: list[str] = []
                with modules_run(model, seen):
                    outputs.append(digest(user_code.loss_of(model(*batch.args, **batch.kwargs))))
                ran.append(sorted(set(seen)))
        for m in dropouts:
            m.train()
        mine = {"beyond": len(set(outputs[1:])) > 1, "dropout": outputs[0] != outputs[1], "out": outputs[0],
                "ran": ran}
        everyone = all_gather_json(mine)
        beyond = any(e["beyond"] for e in everyone)
        stochastic = beyond or any(e["dropout"] for e in everyone)
        differ: set[str] = set()
        for i in range(1 + RANDOM_TRIES):
            sets = [set(e["ran"][i]) for e in everyone]
            differ |= set.union(*sets) - set.intersection(*sets)
        facts = {"parity.stochastic_forward": stochastic, "parity.random_beyond_dropout": beyond,
                 "parity.modules_run_differ": sorted(differ)}
        if stochastic:
            facts["parity.rng_shared_across_ranks"] = len({e["out"] for e in everyone}) == 1
        return facts, beyond

    @staticmethod
    def reference(model: Any, batches: list[Any], ddp_grads: dict[str, Any], loss_ddp: float, n: int,
                  tolerance: float, random: bool) -> dict[str, Any]:
        """One process, the concatenated batch, the same initial weights: compare loss and gradient."""
        import torch

        from troubleshooter.run import user_code

        if random:
            return {"parity.reference_compared": False,
                    "parity.reference_skipped": "the training forward is random beyond nn.Dropout"}
        for m in dropout_modules(model):
            m.eval()
        with single_process_view():
            model.zero_grad(set_to_none=True)
            loss_single = float(user_code.step(model, concatenated(batches)).detach())
        single = dict(model.named_parameters())
        names = [x for x in ddp_grads if single.get(x) is not None and single[x].grad is not None]
        if not names:
            return {"parity.reference_compared": False, "parity.reference_skipped": "no parameter got a gradient"}
        sums = {"ddp": 0.0, "one": 0.0, "dot": 0.0, "diff": 0.0}  # per-tensor float32 reductions, summed in float64
        for x in names:
            a, b = ddp_grads[x].detach().reshape(-1).float(), single[x].grad.detach().reshape(-1).float()
            sums["ddp"] += float(torch.dot(a, a))
            sums["one"] += float(torch.dot(b, b))
            sums["dot"] += float(torch.dot(a, b))
            sums["diff"] += float((a - b).square().sum())
        norm_one, norm_ddp = math.sqrt(sums["one"]), math.sqrt(sums["ddp"])
        if norm_one == 0 or not math.isfinite(norm_one) or not math.isfinite(norm_ddp):
            return {"parity.reference_compared": False,
                    "parity.reference_skipped": f"single-process gradient norm is {norm_one}"}
        ratio = norm_ddp / norm_one
        facts = {"parity.reference_compared": True, "parity.loss_ddp": loss_ddp, "parity.loss_single": loss_single,
                 "parity.update_rel_err": math.sqrt(sums["diff"]) / norm_one,
                 "parity.update_norm_ratio": ratio,
                 "parity.update_cosine": sums["dot"] / (norm_one * norm_ddp) if norm_ddp else 0.0}
        if loss_single:
            facts["parity.loss_ratio"] = loss_ddp / loss_single
        if ratio > 0:
            facts["parity.update_ratio_log_world"] = math.log(ratio) / math.log(n)
        return facts

    @staticmethod
    def summary(facts: dict[str, Any], n: int) -> str:
        """One line: what agreed and what did not."""
        parts = []
        if facts.get("parity.first_differing"):
            diff = facts.get("parity.first_max_abs_diff")
            parts.append(f"{facts['parity.first_differing']} differs across ranks"
                         + (f" (max abs diff {diff:.3g})" if diff is not None else "")
                         + f", ranks agree as {facts['parity.first_agreeing_ranks']}")
        else:
            parts.append(f"all {facts['parity.tensors_compared']} parameters/buffers agree on {n} ranks "
                         f"after {STEPS} steps")
        if facts.get("parity.grads_differ"):
            parts.append(f"all-reduced gradients differ: {', '.join(facts['parity.grads_differ'][:3])}")
        if facts.get("parity.reference_compared"):
            parts.append(f"DDP vs one process: gradient rel. error {facts['parity.update_rel_err']:.2g} "
                         f"(tolerance {facts['parity.tolerance']:.2g}), norm ratio {facts['parity.update_norm_ratio']:.3g}")
        elif facts.get("parity.reference_skipped"):
            parts.append(f"no single-process comparison: {facts['parity.reference_skipped']}")
        if facts.get("parity.legit_differ"):
            parts.append(f"differ as declared/recognised per-rank: {', '.join(facts['parity.legit_differ'][:3])}")
        if "parity.shard_overlap_fraction" in facts:
            parts.append(f"{facts['parity.sampler']}: {facts['parity.shard_overlap_fraction']:.0%} of samples drawn "
                         f"by several ranks")
        return "; ".join(parts)
