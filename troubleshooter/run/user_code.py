"""User code hooks (design.md "User code hooks"): ``--model`` / ``--data`` factories, a built-in model, the loss.

``--model MODULE:CALLABLE`` is a zero-argument callable returning an ``nn.Module`` (on the CPU; the
tool moves it). ``--data MODULE:CALLABLE`` returns a ``Dataset`` or an iterable of batches. Without
``--data`` the model's ``example_input_array`` supplies the input (a tuple is passed as positional
arguments, a dict as keyword arguments, anything else as the single argument, like Lightning). A
data batch that is a tuple/list is ``(inputs, targets, ...)``: its first element is the input; a dict
batch is passed as keyword arguments (Hugging Face style). A tensor output is reduced to a scalar
loss; a mapping or object with ``loss`` uses that loss.

Only rank processes call this module (it runs user code, which the probes were asked to run);
torch is imported inside the functions.
"""

from __future__ import annotations

import ast
import copy
import importlib
import importlib.machinery
import inspect
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

BUILTIN = "builtin"
BUILTIN_VOCAB = 2048
BUILTIN_SEQ = 64
BUILTIN_BATCH = 8
# Calls that read or fill a Hugging Face cache (model hub or datasets).
HF_CALLS = ("from_pretrained", "load_dataset", "snapshot_download", "hf_hub_download", "load_from_disk")


class HookError(Exception):
    """A ``--model`` / ``--data`` hook could not be loaded or used; the message says what was expected."""


@dataclass
class LoadedModel:
    """A model as the factory returned it, where it came from and how long the factory took."""

    module: Any
    source: str  # "user" or "builtin"
    spec: str
    load_s: float


@dataclass
class Batch:
    """One input for the model: how to call it and how much work it carries."""

    args: tuple
    kwargs: dict
    samples: int
    tokens: int | None  # set when the input is a batch of token-id sequences


def _split(spec: str) -> tuple[str, str]:
    """(module, attribute) of ``MODULE:CALLABLE``; HookError when either part is missing."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise HookError(f"{spec!r}: expected MODULE:CALLABLE, e.g. mypkg.models:build_model")
    return module_name, attr


def check_spec(spec: str, cwd: str | None = None) -> None:
    """Fail early (HookError) on a malformed ``MODULE:CALLABLE`` or a top-level module that does not exist.

    Only the finder is consulted for the top-level name: nothing of the user's code runs here.
    """
    module_name, _ = _split(spec)
    top = module_name.split(".")[0]
    search = [p for p in (cwd or os.getcwd(), *sys.path) if p is not None]
    if importlib.machinery.PathFinder.find_spec(top, search) is None and top not in sys.builtin_module_names:
        raise HookError(f"{spec!r}: no module named {top!r} in the current directory or on PYTHONPATH")


def resolve(spec: str, cwd: str | None = None) -> Callable[[], Any]:
    """Import ``MODULE:CALLABLE`` from the current directory / PYTHONPATH, like ``python -m``."""
    module_name, attr = _split(spec)
    for path in (cwd, ""):
        if path is not None and path not in sys.path:
            sys.path.insert(0, path)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise HookError(f"{spec!r}: cannot import module {module_name!r}: {exc}") from exc
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise HookError(f"{spec!r}: module {module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise HookError(f"{spec!r}: {attr!r} is a {type(target).__name__}, expected a zero-argument callable")
    return target


def builtin_model() -> Any:
    """A small token model (embedding, MLP, vocabulary head) with an ``example_input_array`` of token ids."""
    import torch
    from torch import nn

    class TinyTokenModel(nn.Module):
        """Embedding -> 2-layer MLP -> LayerNorm -> vocabulary logits."""

        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(BUILTIN_VOCAB, 128)
            self.mlp = nn.Sequential(nn.Linear(128, 512), nn.GELU(), nn.Linear(512, 128))
            self.norm = nn.LayerNorm(128)
            self.head = nn.Linear(128, BUILTIN_VOCAB)
            self.example_input_array = torch.randint(0, BUILTIN_VOCAB, (BUILTIN_BATCH, BUILTIN_SEQ))

        def forward(self, ids: Any) -> Any:
            """Logits for every position."""
            h = self.embed(ids)
            return self.head(self.norm(h + self.mlp(h)))

    return TinyTokenModel()


_MODELS: dict[str, LoadedModel] = {}


def load_model(options: Mapping[str, Any]) -> LoadedModel:
    """A fresh copy of the ``--model`` factory's module (built-in model without it).

    The factory runs once per rank process (timed, seeded so ranks start equal); later calls get a
    deep copy, so probes may move and train their copy without paying the load again.
    """
    import torch

    spec = options.get("model") or BUILTIN
    if spec not in _MODELS:
        factory = builtin_model if spec == BUILTIN else resolve(spec, options.get("cwd"))
        torch.manual_seed(0)
        started = time.perf_counter()
        module = factory()
        took = time.perf_counter() - started
        if not isinstance(module, torch.nn.Module):
            raise HookError(f"--model {spec}: returned a {type(module).__name__}, expected a torch.nn.Module")
        _MODELS[spec] = LoadedModel(module, "builtin" if spec == BUILTIN else "user", spec, took)
    first = _MODELS[spec]
    return LoadedModel(copy.deepcopy(first.module), first.source, spec, first.load_s)


def _first_batch(data: Any, spec: str) -> Any:
    import torch

    if isinstance(data, torch.utils.data.Dataset) and hasattr(data, "__len__") and hasattr(data, "__getitem__"):
        loader = torch.utils.data.DataLoader(data, batch_size=BUILTIN_BATCH, shuffle=False)
        return next(iter(loader))
    try:
        return next(iter(data))
    except TypeError:
        raise HookError(f"--data {spec}: returned a {type(data).__name__}, expected a Dataset or an iterable "
                        "of batches") from None
    except StopIteration:
        raise HookError(f"--data {spec}: the data is empty") from None


def load_data(options: Mapping[str, Any]) -> tuple[Any, float] | None:
    """(first batch of the ``--data`` factory, seconds to build the data and draw it), or None without --data."""
    spec = options.get("data")
    if not spec:
        return None
    factory = resolve(spec, options.get("cwd"))
    started = time.perf_counter()
    batch = _first_batch(factory(), spec)
    return batch, time.perf_counter() - started


def to_device(value: Any, device: Any) -> Any:
    """``value`` with every tensor inside (tuples, lists, dicts) moved to ``device``."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: to_device(v, device) for k, v in value.items()}
    return value


def _work(value: Any) -> tuple[int, int | None]:
    """(samples, tokens) of an input: tokens when it is an integer tensor of shape (batch, sequence)."""
    import torch

    if isinstance(value, dict):
        value = value.get("input_ids", next((v for v in value.values() if isinstance(v, torch.Tensor)), None))
    if isinstance(value, (list, tuple)):
        value = next((v for v in value if isinstance(v, torch.Tensor)), None)
    if not isinstance(value, torch.Tensor) or value.dim() == 0:
        return 1, None
    integer = not value.is_floating_point() and not value.is_complex() and value.dtype != torch.bool
    return int(value.shape[0]), int(value.numel()) if integer and value.dim() == 2 else None


def make_batch(model: Any, options: Mapping[str, Any], device: Any, data: tuple[Any, float] | None = None) -> Batch:
    """The input for ``model`` on ``device``: the ``--data`` batch, else ``example_input_array``."""
    if data is None:
        data = load_data(options)
    if data is not None:
        raw = data[0]
        if isinstance(raw, dict):
            args, kwargs = (), to_device(raw, device)
        elif isinstance(raw, (list, tuple)):
            args, kwargs = (to_device(raw[0], device),), {}
        else:
            args, kwargs = (to_device(raw, device),), {}
    else:
        example = getattr(model, "example_input_array", None)
        if example is None:
            raise HookError("no input for the model: give --data MODULE:CALLABLE or set the model's "
                            "example_input_array")
        example = to_device(example, device)
        if isinstance(example, dict):
            args, kwargs = (), example
        elif isinstance(example, tuple):
            args, kwargs = example, {}
        else:
            args, kwargs = (example,), {}
    samples, tokens = _work(kwargs if kwargs else args[0] if args else None)
    return Batch(args, kwargs, samples, tokens)


def loss_of(output: Any) -> Any:
    """A scalar loss from a model output: ``output.loss`` / ``output['loss']``, else the mean of the first tensor."""
    import torch

    loss = output.get("loss") if isinstance(output, dict) else getattr(output, "loss", None)
    if isinstance(loss, torch.Tensor):
        return loss if loss.dim() == 0 else loss.float().mean()
    if isinstance(output, (list, tuple)) or isinstance(output, dict):
        values = output.values() if isinstance(output, dict) else output
        output = next((v for v in values if isinstance(v, torch.Tensor) and v.is_floating_point()), None)
    if not isinstance(output, torch.Tensor):
        raise HookError(f"the model returned a {type(output).__name__}; expected a tensor, or an object with .loss")
    return output.float().mean()


def step(model: Any, batch: Batch) -> Any:
    """One forward and backward; returns the loss."""
    loss = loss_of(model(*batch.args, **batch.kwargs))
    loss.backward()
    return loss


def hf_calls(spec: str | None) -> list[dict[str, Any]]:
    """Hugging Face cache calls in the source of the ``--model`` / ``--data`` factory's module (parsed, not run).

    The module is already imported by then, so only its file is read; each hit is
    ``{call, repo, path, line}`` with ``repo`` the first string-literal argument when there is one.
    """
    if not spec or spec == BUILTIN:
        return []
    module = sys.modules.get(spec.partition(":")[0])
    try:
        path = inspect.getsourcefile(module) if module else None
        tree = ast.parse(open(path, encoding="utf-8").read(), path) if path else None
    except (OSError, TypeError, SyntaxError, ValueError):
        return []
    hits = []
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in HF_CALLS:
                repo = next((a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)), None)
                hits.append({"call": name, "repo": repo, "path": path, "line": node.lineno})
    return hits
