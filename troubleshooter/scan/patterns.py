"""The scanner's name patterns (``rules/scan/*.yaml``): which calls mean DDP, DataLoader, print...

Every key holds a list of strings. Overlays (``--rules DIR`` with a ``scan/`` folder) append to
the shipped lists. Errors name the file and line.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from troubleshooter.core.errors import UsageError
from troubleshooter.core.paths import rules_dir
from troubleshooter.core.yamlspan import SpanDict, YamlError, load_file

# Keys whose strings are regular expressions (compiled); every other key is a set of names.
REGEX_KEYS = ("batchnorm_model_factories", "all_parameters_used_factories", "global_batch_names",
              "rank_name_patterns", "main_process_patterns", "implicit_callees", "training_step_calls",
              "checkpoint_restore_calls", "framework_collectives", "callback_registrars", "save_helper_names",
              "load_helper_names")
# Key holding a mapping (framework name -> what it does for you), not a list: see frameworks.yaml.
FRAMEWORKS_KEY = "frameworks"
FRAMEWORK_FIELDS = ("entry", "entry_prefixes", "handles")
KEYS = (
    "ddp_wrappers", "dataparallel", "dataloaders", "distributed_samplers", "loader_sharders",
    "init_process_group", "destroy_process_group", "set_device", "spawners", "collectives",
    "main_process_names", "rank_names", "rank_zero_decorators", "rank_zero_first_contexts",
    "hf_cache_loaders", "print_calls", "logging_methods", "logging_modules", "tracker_calls",
    "checkpoint_writers", "print_silencers", "nccl_tuning_vars", "parametric_layers", "batchnorm_layers",
    "sync_batchnorm", "loss_modules_with_weight", "loss_weight_kwargs", "cpu_tensor_factories",
    "seed_calls", "random_draws", "activation_checkpoint", "hf_gradient_checkpointing", "join_contexts",
    "dtype_names", "cpu_count_calls", "barrier_methods", "logger_factories", "log_level_setters",
    "local_rank_names", "distributed_flag_words", "model_preparers", "functional_losses_with_weight",
    "ddp_settings", "global_batch_help_words", "main_process_loggers", "hub_packages", "local_samplers", *REGEX_KEYS,
)


class Patterns:
    """Attribute access to the pattern lists: ``P.ddp_wrappers`` is a frozenset of names."""

    def __init__(self, lists: dict[str, list[str]], frameworks: dict[str, dict[str, frozenset]] | None = None):
        self.frameworks = frameworks or {}
        for key in KEYS:
            values = lists.get(key, [])
            if key in REGEX_KEYS:
                setattr(self, key, [re.compile(v) for v in values])
            else:
                setattr(self, key, frozenset(values))

    def matches(self, key: str, name: str) -> bool:
        """True when ``name`` matches one of the regular expressions under ``key``."""
        return any(rx.search(name) for rx in getattr(self, key))


def _read(path: Path, into: dict[str, list[str]], frameworks: dict[str, dict[str, frozenset]]) -> None:
    try:
        data = load_file(path)
    except (YamlError, OSError) as exc:
        line = getattr(exc, "line", None)
        raise UsageError(f"{path}:{line or 1}: cannot read scanner patterns: {getattr(exc, 'message', exc)}")
    if not isinstance(data, SpanDict):
        raise UsageError(f"{path}:1: expected a mapping of pattern lists")
    for key, values in data.items():
        if key == FRAMEWORKS_KEY:
            _read_frameworks(path, data.line_of(key), values, frameworks)
            continue
        if key not in KEYS:
            raise UsageError(f"{path}:{data.line_of(key)}: unknown scanner pattern list {key!r}; "
                             f"expected one of: {', '.join(KEYS)}")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise UsageError(f"{path}:{data.line_of(key)}: {key} should be a list of strings")
        if key in REGEX_KEYS:
            for value in values:
                try:
                    re.compile(value)
                except re.error as exc:
                    raise UsageError(f"{path}:{data.line_of(key)}: bad regular expression {value!r} in {key}: {exc}")
        into.setdefault(key, []).extend(values)


def _read_frameworks(path: Path, line: int, values, into: dict[str, dict[str, frozenset]]) -> None:
    if not isinstance(values, dict):
        raise UsageError(f"{path}:{line}: {FRAMEWORKS_KEY} should map a framework name to its entry/handles lists")
    for name, spec in values.items():
        where = f"{path}:{values.line_of(name) if isinstance(values, SpanDict) else line}"
        if not isinstance(spec, dict) or set(spec) - set(FRAMEWORK_FIELDS):
            raise UsageError(f"{where}: framework {name!r} should have only the keys {', '.join(FRAMEWORK_FIELDS)}")
        entry = into.setdefault(name, {f: frozenset() for f in FRAMEWORK_FIELDS})
        for field_name in FRAMEWORK_FIELDS:
            items = spec.get(field_name, [])
            if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
                raise UsageError(f"{where}: {name}.{field_name} should be a list of strings")
            entry[field_name] = entry[field_name] | frozenset(items)


@lru_cache(maxsize=8)
def _load(dirs: tuple[str, ...]) -> Patterns:
    lists: dict[str, list[str]] = {}
    frameworks: dict[str, dict[str, frozenset]] = {}
    for directory in dirs:
        for path in sorted((Path(directory) / "scan").glob("*.yaml")):
            _read(path, lists, frameworks)
    return Patterns(lists, frameworks)


def load_patterns(extra_dirs: Iterable[str | Path] = ()) -> Patterns:
    """The shipped patterns plus those of each overlay directory's ``scan/`` folder (cached)."""
    return _load((str(rules_dir()), *map(str, extra_dirs)))
