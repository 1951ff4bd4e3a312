"""The scanner's name patterns (``rules/scan/*.yaml``): which calls mean DDP, DataLoader, print...

Every key holds a list of strings. Overlays (``--rules DIR`` with a ``scan/`` folder) append to
the shipped lists. The files are read by the knowledge loader (``RuleSet.scan_patterns``);
:func:`patterns_for` compiles them. Errors name the file and line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from troubleshooter.core.saferegex import regex_problem
from troubleshooter.core.yamlspan import SpanDict

# Keys whose strings are regular expressions (compiled); every other key is a set of names.
REGEX_KEYS = ("batchnorm_model_factories", "all_parameters_used_factories", "global_batch_names",
              "rank_name_patterns", "main_process_patterns", "implicit_callees", "training_step_calls",
              "checkpoint_restore_calls", "framework_collectives", "callback_registrars", "save_helper_names",
              "load_helper_names", "dataset_fetchers", "collective_helper_names", "lightning_collectives", "sharded_engine_collectives",
              "checkpoint_payload_calls", "local_directory_names", "lightning_log_calls", "lightning_metric_hooks", "collective_attributes",
              "resume_path_names", "host_state_owners", "evaluation_functions", "process_group_starter_names")
MATCH_MEMO = 200_000  # (key, name) answers remembered by Patterns.matches before it starts afresh
# Key whose strings are call signatures ``qualified.name(param, param, ...)``: the positional order of the parameters
# a call may pass either way (``CallSite.kw`` reads a positional argument by its parameter name).
SIGNATURES_KEY = "call_signatures"
_SIGNATURE = re.compile(r"^\s*([\w.]+)\(\s*(\w+(?:\s*,\s*\w+)*)?\s*\)\s*$")
# Keys holding one whole number (a threshold), not a list; an overlay's value replaces the shipped one.
NUMBER_KEYS = ("large_per_rank_batch",)
# Key holding a mapping (framework name -> what it does for you), not a list: see frameworks.yaml.
FRAMEWORKS_KEY = "frameworks"
FRAMEWORK_FIELDS = ("entry", "entry_prefixes", "handles", "opt_outs", "vendored_from")
KEYS = (
    "ddp_wrappers", "dataparallel", "dataloaders", "torch_signature_loaders", "distributed_samplers", "loader_sharders",
    "init_process_group", "destroy_process_group", "set_device", "spawners", "collectives",
    "main_process_names", "rank_names", "rank_zero_decorators", "rank_zero_first_contexts",
    "hf_cache_loaders", "print_calls", "logging_methods", "logging_modules", "tracker_calls",
    "checkpoint_writers", "print_silencers", "nccl_tuning_vars", "parametric_layers", "batchnorm_layers",
    "sync_batchnorm", "loss_modules_with_weight", "loss_weight_kwargs", "cpu_tensor_factories",
    "seed_calls", "random_draws", "random_draw_prefixes", "activation_checkpoint", "hf_gradient_checkpointing", "join_contexts",
    "dtype_names", "cpu_count_calls", "barrier_methods", "logger_factories", "log_level_setters",
    "local_rank_names", "distributed_flag_words", "process_count_words", "device_binding_methods", "model_preparers", "functional_losses_with_weight",
    "ddp_settings", "global_batch_help_words", "main_process_loggers", "hub_packages", "local_samplers", "log_output_setup",
    "framework_collective_functions", "collective_helper_skip_packages", "private_write_targets",
    "dataset_cache_transforms", "dataset_cache_keywords", "dataset_sources", "in_memory_dataset_sources", "loader_repeaters", "loader_reiterators", "process_count_calls",
    "ddp_returning_preparers", "serialising_write_contexts", "gradient_sync_skippers",
    "run_bound_tracker_calls", "tracker_run_starters", "active_run_names", "event_file_writers",
    "tracker_switch_variables", "rank_switch_keywords", "gradient_free_contexts", "device_restoring_loaders", "buffer_registrars",
    "framework_loader_hooks", "synced_object_methods", "gpu_work_names", "clock_calls", "global_batch_config_keys",
    "batch_config_engines", "batching_methods", "gradient_checkpointing_flags", "shape_bound_collectives",
    "ragged_tensor_calls", "loader_seed_arguments", "rank_uniform_exceptions", "device_pickers", "per_device_batch_help_words", SIGNATURES_KEY,
    "loader_measures", "sharded_engine_markers", "url_fetchers", "rank_sharding_datasets", "host_seed_calls",
    "seed_methods", "batch_split_methods", "adapter_packages", "dynamic_field_updates",
    "dynamic_submodule_access",
    *REGEX_KEYS, *NUMBER_KEYS,
)


class Patterns:
    """Attribute access to the pattern lists: ``P.ddp_wrappers`` is a frozenset of names."""

    def __init__(self, lists: dict[str, list[str]], frameworks: dict[str, dict[str, frozenset]] | None = None):
        self.frameworks = frameworks or {}
        self._matched: dict[tuple[str, str], bool] = {}
        # keyword -> ids a framework stops handling when one of its calls passes that keyword as False
        self.framework_opt_outs: dict[str, frozenset[str]] = {}
        for spec in self.frameworks.values():
            for item in spec.get("opt_outs", ()):
                keyword, _, ident = item.partition("=False:")
                self.framework_opt_outs[keyword.strip()] = self.framework_opt_outs.get(keyword.strip(), frozenset()) | {
                    ident.strip()}
        for key in KEYS:
            values = lists.get(key, [])
            if key in REGEX_KEYS:
                setattr(self, key, [re.compile(v) for v in values])
            elif key in NUMBER_KEYS:
                setattr(self, key, values)
            elif key == SIGNATURES_KEY:
                self.signatures = dict(_signature(v) for v in values)  # qualified name -> parameters in order
            else:
                setattr(self, key, frozenset(values))

    def matches(self, key: str, name: str) -> bool:
        """True when ``name`` matches one of the regular expressions under ``key`` (remembered: a scan asks about
        the same names again and again)."""
        found = self._matched.get((key, name))
        if found is None:
            if len(self._matched) > MATCH_MEMO:
                self._matched.clear()
            found = self._matched[key, name] = any(rx.search(name) for rx in getattr(self, key))
        return found


def read_pattern_file(issues: Any, path: Path, data: Any, into: dict[str, Any], verify: bool = True) -> None:
    """Validate one ``scan/*.yaml`` file into ``into`` (key -> names; a number key -> its number; ``frameworks`` ->
    name -> field -> names).

    Called by the knowledge loader (:func:`troubleshooter.core.ruleset.load_rules`); every problem
    goes to ``issues`` with its line. Regular expressions must compile and not backtrack catastrophically.
    """
    if not isinstance(data, SpanDict):
        issues.add(path, getattr(data, "line", 1) or 1, "expected a mapping of pattern lists")
        return
    for key, values in data.items():
        line = data.line_of(key)
        if key == FRAMEWORKS_KEY:
            _read_frameworks(issues, path, line, values, into.setdefault(FRAMEWORKS_KEY, {}))
            continue
        if key not in KEYS:
            issues.add(path, line, f"unknown scanner pattern list {key!r}", f"expected one of: {', '.join(KEYS)}")
            continue
        if key in NUMBER_KEYS:
            if type(values) is not int or values < 1:
                issues.add(path, line, f"{key} should be a whole number above 0")
            else:
                into[key] = values
            continue
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            issues.add(path, line, f"{key} should be a list of strings")
            continue
        if key in REGEX_KEYS:
            problems = [(i, problem) for i, v in enumerate(values) if (problem := regex_problem(v))]
            for i, problem in problems:
                issues.add(path, values.line_of(i), f"{key}[{i}]: {problem}")
            if problems:
                continue
        if key == SIGNATURES_KEY:
            bad = [i for i, v in enumerate(values) if not _SIGNATURE.match(v)]
            for i in bad:
                issues.add(path, values.line_of(i), f"{key}[{i}]: expected 'qualified.name(param, param, ...)'")
            if bad:
                continue
        into.setdefault(key, []).extend(values)


def _signature(text: str) -> tuple[str, tuple[str, ...]]:
    """``"torch.save(obj, f)"`` -> ``("torch.save", ("obj", "f"))``."""
    name, params = _SIGNATURE.match(text).groups()
    return name, tuple(p.strip() for p in (params or "").split(",") if p.strip())


def _read_frameworks(issues: Any, path: Path, line: int, values: Any, into: dict[str, dict[str, frozenset]]) -> None:
    if not isinstance(values, dict):
        issues.add(path, line, f"{FRAMEWORKS_KEY} should map a framework name to its entry/handles lists")
        return
    for name, spec in values.items():
        where = values.line_of(name) if isinstance(values, SpanDict) else line
        if not isinstance(spec, dict) or set(spec) - set(FRAMEWORK_FIELDS):
            issues.add(path, where, f"framework {name!r} should have only the keys {', '.join(FRAMEWORK_FIELDS)}")
            continue
        entry = into.setdefault(name, {f: frozenset() for f in FRAMEWORK_FIELDS})
        for field_name in FRAMEWORK_FIELDS:
            items = spec.get(field_name, [])
            if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
                issues.add(path, where, f"{name}.{field_name} should be a list of strings")
                continue
            entry[field_name] = entry[field_name] | frozenset(items)


def patterns_for(rules: Any) -> Patterns:
    """The compiled patterns of a loaded RuleSet (built once per RuleSet)."""
    if "scan.patterns" not in rules.derived:
        lists = {k: v for k, v in rules.scan_patterns.items() if k != FRAMEWORKS_KEY}
        rules.derived["scan.patterns"] = Patterns(lists, rules.scan_patterns.get(FRAMEWORKS_KEY))
    return rules.derived["scan.patterns"]
