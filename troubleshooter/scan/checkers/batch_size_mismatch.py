"""batch-size-mismatch: the global batch size handed to each rank's DataLoader."""

from __future__ import annotations

import ast
import re

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import dataloaders, dict_keys, loader_label, local_callee
from troubleshooter.scan.model import const, dotted, last, source


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
            elif size and (_declared_global_option(m, size) or _documented_global_parameter(m, site.ctx.func, size)):
                loader = loader_label(site)
                yield Hit(site.line, f"{loader} takes batch_size={size} on every rank, but its help or "
                                     f"docstring calls it the total batch over all GPUs / processes: DDP's global batch is then {size} x "
                                     "world_size; divide it by the world size", {"loader": loader, "variable": size})
            elif self._times_process_count(m, site):
                loader, size = loader_label(site), source(site.kw("batch_size"))
                yield Hit(site.line, f"{loader} takes batch_size={size} on every rank: multiplied by the GPU / process "
                                     "count (DataParallel's global batch) it is world_size times the per-GPU batch in "
                                     "each DDP process; pass the per-GPU batch", {"loader": loader, "variable": size})
        yield from self._accumulation_without_world_size(m)
        yield from self._epoch_steps_without_world_size(m)
        yield from self._engine_global_batch_per_rank(m)

    @staticmethod
    def _engine_global_batch_per_rank(m):
        """``deepspeed.initialize(config={"train_batch_size": B, ...})`` declares B the global batch, yet the ranks'
        own loader (``DataLoader(batch_size=B)``, ``WebDataset(...).batched(B)``) takes B each: the real batch is B x
        world_size. Quiet when the loader is the engine's (``training_data=``) or divides B."""
        declared = {}
        for engine in m.calls_named(m.P.batch_config_engines):
            config = engine.kw("config") or engine.kw("config_params")
            keys = dict_keys(m, config, engine.line, engine.ctx.func, depth=2) if config is not None else {}
            for key in m.P.global_batch_config_keys:
                name = dotted(keys.get(key))
                if name:
                    declared[name] = (key, engine)
        if not declared:
            return
        for site in m.calls:
            if site.rank0:
                continue
            if site.name in m.P.dataloaders:
                size, what = dotted(site.kw("batch_size")), loader_label(site)
            elif site.method in m.P.batching_methods and site.node.args:
                size, what = dotted(site.node.args[0]), f".{site.method}({source(site.node.args[0])})"
            else:
                continue
            if size in declared:
                key, engine = declared[size]
                yield Hit(site.line, f"{what} batches {size} samples on every rank, but {size} is the engine's "
                                     f"{key} (line {engine.line}: the global batch of all ranks together), so each "
                                     f"step sees {size} x world_size samples; give each rank {size} // world_size",
                          {"loader": what, "variable": size})
                return

    @staticmethod
    def _times_process_count(m, site) -> bool:
        """``batch_size=b * torch.cuda.device_count()`` (or ``* dist.get_world_size()``, also through a name bound
        to it in the same function)."""
        value = site.kw("batch_size")
        if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)) or site.rank0 or (
                site.ctx.dist_branch or site.ctx.optional):
            return False  # rank 0's own loader, or a branch (the DataParallel / single-process arm) it cannot tell
        for side in (value.left, value.right):
            made = m.value_call(side, site.line, site.ctx.func)
            if made is not None and made.name in m.P.process_count_calls:
                return True
        return False

    @staticmethod
    def _epoch_steps_without_world_size(m):
        """``for _ in range(epoch_size // batch_size):`` stepping a DDP model on data no sampler shards: each rank
        runs the whole epoch's steps on its own batches, so an "epoch" is world_size times the data and the step
        count depends on the GPU count."""
        if not m.calls_named(m.P.ddp_wrappers) or m.calls_named(m.P.distributed_samplers):
            return
        for loop in m.loops:
            if not isinstance(loop.node, ast.For) or not m.is_training_loop(loop.node):
                continue
            count = loop.node.iter
            if not (isinstance(count, ast.Call) and dotted(count.func) == "range" and len(count.args) == 1):
                continue
            name = dotted(count.args[0])
            binding = m.binding(name, loop.node.lineno, loop.ctx.func) if name else None
            value = binding.value if binding is not None else count.args[0]
            if not (isinstance(value, ast.BinOp) and isinstance(value.op, (ast.FloorDiv, ast.Div))):
                continue
            divisor = dotted(value.right)
            if not divisor or "batch" not in last(divisor).lower() or _mentions_world(m, loop.ctx.func):
                continue
            yield Hit(loop.node.lineno, f"each rank runs {ast.unparse(value)} steps of {divisor} samples: the "
                                        "epoch is not split across ranks, so it holds world_size times the data and "
                                        "its length depends on the GPU count; divide by the world size (or make "
                                        f"{divisor} the global batch)", {"loader": divisor, "variable": divisor})
            return

    @staticmethod
    def _accumulation_without_world_size(m):
        """``accum = batch_size // device_batch_size``: the accumulation count that reaches a target batch forgets
        that every rank contributes a device batch, so the real batch is world_size times the target."""
        for target, bindings in m.bindings.items():
            if "accum" not in last(target).lower():
                continue
            for b in bindings:
                value = b.value
                if not (isinstance(value, ast.BinOp) and isinstance(value.op, (ast.FloorDiv, ast.Div))):
                    continue
                sides = [dotted(value.left), dotted(value.right)]
                if not all(side and "batch" in last(side).lower() for side in sides):
                    continue
                if _mentions_world(m, b.func) or not _declared_global(m, sides[0]):
                    continue
                yield Hit(b.line, f"{target} = {sides[0]} // {sides[1]} ignores the world size: every rank adds "
                                  f"{sides[1]} samples per micro-step, so each optimizer step sees {sides[0]} x "
                                  f"world_size samples; divide by the world size too",
                          {"loader": sides[1], "variable": sides[0]})


def _declared_global(m, name: str) -> bool:
    """The numerator is the global batch: named so, or its command-line option's help says so."""
    option = last(name)
    if m.P.matches("global_batch_names", option.lower()):
        return True
    for site in m.calls:
        if site.method != "add_argument":
            continue
        flags = [const(a) for a in site.node.args]
        if not any(isinstance(f, str) and f.lstrip("-").replace("-", "_") == option for f in flags):
            continue
        dest = const(site.kw("dest"))
        help_text = const(site.kw("help"))
        if (dest in (None, option)) and isinstance(help_text, str):
            return any(word in help_text.lower() for word in m.P.global_batch_help_words)
    help_text = _field_help(m, option)
    return isinstance(help_text, str) and any(word in help_text.lower() for word in m.P.global_batch_help_words)


def _field_help(m, option: str) -> str | None:
    """The help of a dataclass / pydantic field named ``option`` in a class of the file (HfArgumentParser-style
    arguments: ``batch_size: int = field(default=64, metadata={"help": "Total batch size across all GPUs"})``,
    ``Field(64, description=...)``)."""
    for cls in m.classes.values():
        for stmt in cls.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == option
                    and isinstance(stmt.value, ast.Call)):
                continue
            description = next((k.value for k in stmt.value.keywords if k.arg in ("description", "help")), None)
            metadata = next((k.value for k in stmt.value.keywords if k.arg == "metadata"), None)
            if isinstance(metadata, ast.Dict):
                description = next((v for k, v in zip(metadata.keys, metadata.values) if const(k) == "help"), None)
            return const(description) if description is not None else None
    return None


def _mentions_world(m, func) -> bool:
    """The function that computes the count divides by the world size somewhere (before or after)."""
    scope = func.node if func is not None else m.tree
    return any(isinstance(n, (ast.Name, ast.Attribute)) and _world_word(dotted(n) or "")
               for n in ast.walk(scope))


def _world_word(name: str) -> bool:
    low = last(name).lower()
    return "world" in low or "num_processes" in low or "n_gpu" in low or "ngpu" in low or "num_gpus" in low


def _declared_global_option(m, name: str) -> bool:
    """``name`` reads a command-line option (``args.batch_size``) whose help calls it the batch of all GPUs together
    (``_declared_global``: "total batch size across all GPUs"), and nothing in the file reassigns that attribute (the
    ImageNet example's ``args.batch_size = int(args.batch_size / ngpus_per_node)`` makes it the per-GPU batch). Not
    when the help also calls it the batch of one GPU (``per_device_batch_help_words``: MAE's "Batch size per GPU
    (effective batch size is ...)")."""
    attr = last(name) if "." in name else None
    if attr is None or any(last(t) == attr and "." in t for t in m.bindings):
        return False
    helps = [const(s.kw("help")) for s in m.calls if s.method == "add_argument" and any(
        isinstance(f, str) and f.lstrip("-").replace("-", "_") == attr for f in map(const, s.node.args))]
    helps.append(_field_help(m, attr))
    if any(isinstance(h, str) and any(w in h.lower() for w in m.P.per_device_batch_help_words) for h in helps):
        return False  # "batch size per GPU (effective batch size is batch_size * accum_iter * # gpus)"
    return _declared_global(m, name)

def _documented_global_parameter(m, func, name: str, depth: int = 0) -> bool:
    """``name`` is a parameter of ``func`` that its docstring documents as the global batch (the entry's first
    sentence: "batch_size: Global batch size. The batch size per device is ..."), never rebound in ``func``; or a
    parameter that a local caller fills, unchanged, from such a parameter of its own (two calls up)."""
    if func is None or func.name == "<class>" or "." in name:
        return False
    params = [a.arg for a in (*func.node.args.posonlyargs, *func.node.args.args, *func.node.args.kwonlyargs)]
    if name not in params or any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                                 for n in ast.walk(func.node)):
        return False
    entry = _docstring_entry(ast.get_docstring(func.node) or "", name)
    if entry is not None:
        first = re.split(r"(?<=\.)\s", entry.strip(), maxsplit=1)[0].lower()
        return any(w in first for w in m.P.global_batch_help_words) and not any(
            w in first for w in m.P.per_device_batch_help_words)
    if depth >= 2:
        return False
    offset = 1 if func.cls is not None else 0
    for call in m.calls:
        callee = local_callee(m, call)
        if callee is None or callee.node is not func.node:
            continue
        index = params.index(name) - offset
        arg = call.kw(name) or (call.node.args[index] if 0 <= index < len(call.node.args) else None)
        if isinstance(arg, ast.Name) and _documented_global_parameter(m, call.ctx.func, arg.id, depth + 1):
            return True
    return False


def _docstring_entry(doc: str, name: str) -> str | None:
    """The text a docstring gives a parameter: Google (``name (int): text``), Sphinx (``:param name: text``) or
    NumPy (``name : int`` over an indented description), continuation lines included."""
    lines = doc.splitlines()
    head = re.compile(rf"^(\s*)(?::param\s+(?:\w+\s+)?{name}:|{name}\s*(?:\([^)]*\))?\s*:)(.*)$")
    for i, line in enumerate(lines):
        match = head.match(line)
        if not match:
            continue
        indent, text = len(match.group(1)), match.group(2).strip()
        numpy_style = re.match(rf"^\s*{name}\s+:", line) is not None  # ``name : int`` over its description
        parts = [] if numpy_style else [text]
        for nxt in lines[i + 1:]:
            if not nxt.strip() or len(nxt) - len(nxt.lstrip()) <= indent:
                break
            parts.append(nxt.strip())
        return " ".join(parts)
    return None


CHECKER = BatchSizeMismatchChecker()
