"""Fuzz targets: one per parser, each taking bytes and raising nothing but its documented errors.

A target returns normally or raises one of ``Target.allowed`` (the errors the tool reports to the
user with exit 2); anything else, or running longer than ``HANG_S``, is a finding. The strategies
produce bytes that are mostly shaped like the real input (log lines, conditions, rule files,
reports, pickles) so the fuzzer gets past the first syntax check.
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import pickle
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
MINI_RULES = HERE.parent / "data" / "mini_rules"
HANG_S = 5.0


@dataclass(frozen=True)
class Target:
    """A parser under fuzzing: ``run(data)``, the errors it may raise, and a strategy for its input."""

    name: str
    run: Callable[[bytes], Any]
    allowed: tuple[type[BaseException], ...]
    inputs: Callable[[], st.SearchStrategy[bytes]]


@functools.lru_cache(maxsize=None)
def _rules():
    from troubleshooter.core.ruleset import load_rules

    return load_rules()


@functools.lru_cache(maxsize=None)
def _signatures():
    from troubleshooter.logs.signatures import compile_signatures

    return compile_signatures(_rules().signatures)


# ---- logs -------------------------------------------------------------------------------------

def run_logs(data: bytes) -> Any:
    """The streaming log analyzer over one file's bytes (gzip too, when the bytes are gzip)."""
    from troubleshooter.logs.analyzer import LogAnalyzer

    analyzer = LogAnalyzer(signatures=_signatures())
    stream = gzip.GzipFile(fileobj=io.BytesIO(data)) if data[:2] == b"\x1f\x8b" else io.BytesIO(data)
    try:
        analyzer.feed_file(stream, "fuzz.log")
    except (OSError, EOFError) as exc:  # what analyze_paths turns into "cannot read log" (exit 2)
        raise LogReadError(str(exc)) from None
    return analyzer.facts()


class LogReadError(Exception):
    """A corrupt or truncated compressed log (the CLI reports it with exit 2)."""


_LOG_LINES = [
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    "[rank1]: Traceback (most recent call last):",
    '[rank1]:   File "train.py", line 12, in <module>',
    "NCCL WARN Call to connect returned Connection refused",
    "host:123:456 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
    "[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
    "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.",
    "  exitcode  : -9 (pid: 1234)", "Root Cause (first observed failure):", "[0]:", "  rank      : 1 (local_rank: 1)",
    "============================================================",
    "2024-01-01T00:00:00.123Z [rank0]:[W reducer.cpp:1389] Warning: find_unused_parameters=True",
]


def log_inputs() -> st.SearchStrategy[bytes]:
    line = st.one_of(st.sampled_from(_LOG_LINES), st.text(max_size=120),
                     st.builds(lambda a, b: a + b, st.sampled_from(_LOG_LINES), st.text(max_size=40)))
    text = st.lists(line, max_size=40).map(lambda ls: "\n".join(ls).encode("utf-8", "surrogatepass"))
    plain = st.one_of(text, st.binary(max_size=2000))
    return st.one_of(plain, plain.map(gzip.compress), plain.map(lambda b: gzip.compress(b)[: max(1, len(b) // 2)]))


# ---- conditions -------------------------------------------------------------------------------

def run_conditions(data: bytes) -> Any:
    """Parse a condition as a rule file would, validate it, and evaluate it when valid."""
    from troubleshooter.core import conditions, yamlspan

    cond = yamlspan.load_text(data.decode("utf-8", "replace"))
    problems = list(conditions.validate(cond))
    if problems:
        return problems
    facts = {"a.b": 1, "a.c": [1, "x"], "a.d": "text", "a.e": {"k": 2}, "a.f": None, "a.g": True, "a.h": 2.5}
    list(conditions.facts_read(cond))
    return conditions.evaluate(cond, facts, frozenset({"x", "y"}))


def _yaml_dump(value: Any) -> bytes:
    import yaml

    return yaml.safe_dump(value, default_flow_style=None, allow_unicode=True).encode("utf-8", "surrogatepass")


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20))
_OPS = st.sampled_from(["equals", "not_equals", "gt", "ge", "lt", "le", "in", "not_in", "contains", "matches",
                        "nonempty", "empty", "is_true", "is_false", "exists", "missing", "eq", 7])
_FACTS = st.sampled_from(["a.b", "a.c", "a.d", "a.e", "a.f", "a.g", "a.h", "a.zz", 3])


def _conditions() -> st.SearchStrategy[Any]:
    leaf = st.one_of(
        st.builds(lambda f, o, v: {"fact": f, "op": o, "value": v}, _FACTS, _OPS,
                  st.one_of(_SCALARS, st.lists(_SCALARS, max_size=3), st.sampled_from(["^a.*", "(a+)+$", "[", "x"]))),
        st.builds(lambda f, o: {"fact": f, "op": o}, _FACTS, _OPS),
        st.builds(lambda f, o, r: {"fact": f, "op": o, "ref": r}, _FACTS, _OPS, _FACTS),
        st.builds(lambda i: {"finding": i}, st.one_of(st.sampled_from(["x", "y", "z"]), _SCALARS)),
        _SCALARS)
    return st.recursive(leaf, lambda inner: st.one_of(
        st.builds(lambda xs: {"all": xs}, st.lists(inner, max_size=3)),
        st.builds(lambda xs: {"any": xs}, st.lists(inner, max_size=3)),
        st.builds(lambda x: {"not": x}, inner),
        st.builds(lambda x, y: {"all": [x], "any": [y]}, inner, inner)), max_leaves=12)


def condition_inputs() -> st.SearchStrategy[bytes]:
    return st.one_of(_conditions().map(_yaml_dump), st.text(max_size=300).map(lambda t: t.encode("utf-8", "replace")))


# ---- rules loader -----------------------------------------------------------------------------

_RULE_FILES = ["checks/fuzz.yaml", "findings/fuzz.yaml", "trees/fuzz.yaml", "signatures/fuzz.yaml"]


def run_rules(data: bytes) -> Any:
    """Load the mini rule base with one overlay file holding ``data`` (its first line names where it goes)."""
    from troubleshooter.core.ruleset import load_rules

    where = _RULE_FILES[data[0] % len(_RULE_FILES)] if data else _RULE_FILES[0]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / where
        path.parent.mkdir(parents=True)
        path.write_bytes(data[1:])
        return load_rules([tmp], base=MINI_RULES)


def rule_inputs() -> st.SearchStrategy[bytes]:
    template = st.text(max_size=40) | st.sampled_from(["{{ facts['a.b'] }}", "{% for i in range(99999) %}{% for j in "
                                                        "range(99999) %}x{% endfor %}{% endfor %}", "{{ x.__class__ }}"])
    check = st.fixed_dictionaries({"id": st.just("fuzz"), "finding": st.sampled_from(["fuzz", "network-unreachable"])},
                                  optional={"when": _conditions(), "detail": template, "scope": _SCALARS,
                                            "severity": st.sampled_from(["error", "warning", "info", "fatal"])})
    finding = st.fixed_dictionaries({"id": st.just("fuzz")}, optional={
        "title": template, "severity": st.sampled_from(["error", "warning", "info", 3]), "category": st.text(max_size=10),
        "why": template, "fix": template, "commands": st.lists(template, max_size=2),
        "references": st.lists(st.text(max_size=30), max_size=2)})
    signature = st.fixed_dictionaries({"id": st.just("fuzz"), "pattern": st.sampled_from(
        ["CUDA out of memory", "(a+)+$", "[", "(?P<x>.*)", "x{99999999}", "ok"]),
        "note": st.text(max_size=20)}, optional={"finding": st.just("network-unreachable"), "priority": _SCALARS})
    body = st.one_of(check, finding, signature, st.lists(signature, max_size=2)).map(_yaml_dump)
    raw = st.text(max_size=300).map(lambda t: t.encode("utf-8", "replace"))
    return st.tuples(st.integers(0, 3), st.one_of(body, raw)).map(lambda p: bytes([p[0]]) + p[1])


# ---- report renderer --------------------------------------------------------------------------

def run_report(data: bytes) -> Any:
    """Load a saved report (schema validation) and render it in every format."""
    from troubleshooter.report.document import load_report
    from troubleshooter.report.render import render

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.json"
        path.write_bytes(data)
        doc = load_report(str(path))
    return [render(doc, fmt) for fmt in ("md", "html", "json", "text")]


@functools.lru_cache(maxsize=None)
def _sample_report() -> str:
    from tests.render.test_render import sample_doc

    return json.dumps(sample_doc())


_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                               st.text(max_size=30)),
                     lambda inner: st.one_of(st.lists(inner, max_size=4),
                                             st.dictionaries(st.text(max_size=10), inner, max_size=4)), max_leaves=15)


def _mutate(doc: dict, paths: list[tuple[int, Any]]) -> dict:
    """Replace values found by walking ``doc`` with the numbers in ``paths`` (index choices) by new values."""
    for choices, value in paths:
        node, key = doc, None
        for choice in choices:
            children = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) \
                if isinstance(node, list) else []
            if not children:
                break
            key, child = children[choice % len(children)]
            if not isinstance(child, (dict, list)):
                break
            node = child
        if key is not None and isinstance(node, (dict, list)):
            try:
                node[key] = value
            except (IndexError, TypeError):
                pass
    return doc


def report_inputs() -> st.SearchStrategy[bytes]:
    mutations = st.lists(st.tuples(st.lists(st.integers(0, 50), min_size=1, max_size=6), _JSON), max_size=4)
    mutated = mutations.map(lambda m: json.dumps(_mutate(json.loads(_sample_report()), m)).encode())
    return st.one_of(mutated, st.binary(max_size=200), _JSON.map(lambda v: json.dumps(v).encode()))


# ---- flight recorder dumps --------------------------------------------------------------------

def run_flight_recorder(data: bytes) -> Any:
    """Read one rank's dump file and analyse it."""
    from troubleshooter.live import flight_recorder as fr

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nccl_trace_rank_0"
        path.write_bytes(data)
        dump = fr.load_dump(path)
    return fr.analyse({0: dump, 1: dump})


def dump_inputs() -> st.SearchStrategy[bytes]:
    entry = st.fixed_dictionaries({}, optional={
        "collective_seq_id": st.one_of(st.integers(-2, 5), _SCALARS), "profiling_name": st.one_of(
            st.sampled_from(["nccl:all_reduce", "nccl:broadcast", "x"]), _SCALARS),
        "input_sizes": _JSON, "input_dtypes": _JSON, "state": st.sampled_from(["completed", "scheduled", 1]),
        "process_group": st.one_of(st.tuples(st.text(max_size=3), st.text(max_size=3)), _JSON), "is_p2p": _JSON})
    dump = st.fixed_dictionaries({"entries": st.one_of(st.lists(entry, max_size=5), _JSON)},
                                 optional={"pg_status": _JSON, "version": _SCALARS})
    pickled = st.tuples(dump, st.integers(0, pickle.HIGHEST_PROTOCOL)).map(lambda p: pickle.dumps(p[0], protocol=p[1]))
    return st.one_of(pickled, pickled.map(lambda b: b[: len(b) // 2]), st.binary(max_size=300))


def _targets() -> dict[str, Target]:
    from troubleshooter.core.errors import RuleFileError, UsageError
    from troubleshooter.core.yamlspan import YamlError
    from troubleshooter.live.flight_recorder import DumpError

    return {t.name: t for t in (
        Target("logs", run_logs, (LogReadError,), log_inputs),
        Target("conditions", run_conditions, (YamlError,), condition_inputs),
        Target("rules", run_rules, (RuleFileError,), rule_inputs),
        Target("report", run_report, (UsageError,), report_inputs),
        Target("flight_recorder", run_flight_recorder, (DumpError,), dump_inputs),
    )}


TARGETS = _targets()
