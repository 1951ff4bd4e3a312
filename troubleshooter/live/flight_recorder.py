"""PyTorch flight recorder: the variables that enable it, reading its dumps safely, and what they say.

Variable names follow the installed torch (read from its metadata, torch is not imported):
``TORCH_FR_BUFFER_SIZE`` / ``TORCH_FR_DUMP_TEMP_FILE`` from 2.9, ``TORCH_NCCL_TRACE_BUFFER_SIZE`` /
``TORCH_NCCL_DEBUG_INFO_TEMP_FILE`` before (2.13's FlightRecorder.hpp reads both spellings).
A dump is a pickle per rank, written to ``<prefix><rank>``: ``{version, pg_config, pg_status,
entries: [{collective_seq_id, profiling_name, input_sizes, state, process_group: (name, desc),
frames, ...}]}`` (the layout torch.distributed.flight_recorder's fr_trace reads). Dumps are
loaded with :class:`RestrictedUnpickler`, which admits only plain containers and scalars: a
dump that names any class or function (the way malicious pickles run code) is rejected. A plain
dump is then measured as it would expand (shared sub-objects counted at every use, as printing
or comparing them would) and refused beyond :data:`BUDGET`: a few hundred bytes of nested shared
lists can stand for gigabytes. Refusals become ``live.flight-recorder-dump-refused`` hits.
"""

from __future__ import annotations

import io
import os
import pickle
import re
import stat
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

MAX_DUMP_BYTES = 256 * 1024 * 1024
DEFAULT_BUFFER = "2000"
REFUSED = "live.flight-recorder-dump-refused"


@dataclass(frozen=True)
class Budget:
    """Limits on a dump as it expands: objects, nesting depth, bytes of text."""

    objects: int = 5_000_000  # a full 20000-entry buffer with 64 frames each is about 4 M
    depth: int = 64
    text_bytes: int = 512 * 1024 * 1024


BUDGET = Budget()


class DumpError(ValueError):
    """A file is not a readable flight recorder dump."""


class RestrictedUnpickler(pickle.Unpickler):
    """Unpickler that refuses every global: only dict, list, tuple, set, str, bytes, numbers, bools, None load."""

    def find_class(self, module: str, name: str) -> Any:  # noqa: D102 - documented on the class
        raise pickle.UnpicklingError(f"refused to load {module}.{name}: flight recorder dumps hold only plain data")

    def persistent_load(self, pid: Any) -> Any:  # noqa: D102
        raise pickle.UnpicklingError("refused a persistent reference: flight recorder dumps hold only plain data")


def safe_loads(data: bytes, budget: Budget = BUDGET) -> Any:
    """Unpickle ``data`` admitting only plain containers and scalars, within ``budget`` once expanded."""
    obj = RestrictedUnpickler(io.BytesIO(data)).load()
    check_budget(obj, budget)
    return obj


def check_budget(root: Any, budget: Budget = BUDGET) -> None:
    """ValueError when ``root`` expanded (shared objects counted at every use) exceeds ``budget``.

    Linear in the distinct objects: each container's expanded size is computed once, bottom up,
    without recursion, so neither a deep chain nor an exponential DAG costs more than its bytes.
    """
    sizes: dict[int, tuple[int, int, int]] = {}  # id -> (objects, depth, text bytes) expanded
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        obj, children_done = stack.pop()
        key = id(obj)
        if isinstance(obj, (str, bytes, bytearray)):
            sizes[key] = (1, 0, len(obj))
            continue
        if not isinstance(obj, (list, tuple, dict, set, frozenset)):
            sizes[key] = (1, 0, 0)
            continue
        items = [x for pair in obj.items() for x in pair] if isinstance(obj, dict) else list(obj)
        if children_done:
            on_path.discard(key)
            objects, depth, text = 1, 0, 0
            for item in items:
                o, d, t = sizes[id(item)]
                objects, depth, text = objects + o, max(depth, d + 1), text + t
            if objects > budget.objects or depth > budget.depth or text > budget.text_bytes:
                raise ValueError(f"expands to more than {budget.objects} objects, depth {budget.depth} or "
                                 f"{budget.text_bytes} bytes of text (at least {objects} objects, depth {depth}, "
                                 f"{text} bytes)")
            sizes[key] = (objects, depth, text)
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise ValueError("refers to itself (a cycle)")
        on_path.add(key)
        stack.append((obj, True))
        if len(on_path) > budget.depth:
            raise ValueError(f"nests deeper than {budget.depth} levels")
        stack.extend((item, False) for item in items if id(item) not in sizes)


def torch_version() -> str | None:
    """The installed torch version (from package metadata; torch is not imported)."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def _at_least(version: str | None, major: int, minor: int) -> bool:
    match = re.match(r"(\d+)\.(\d+)", version or "")
    return bool(match) and (int(match[1]), int(match[2])) >= (major, minor)


@dataclass(frozen=True)
class FrNames:
    """The flight-recorder variable names a torch version reads."""

    buffer_size: str
    dump_file: str
    pipe_file: str = "TORCH_NCCL_DEBUG_INFO_PIPE_FILE"
    dump_on_timeout: str = "TORCH_NCCL_DUMP_ON_TIMEOUT"


def fr_names(version: str | None = None) -> FrNames:
    """Names for ``version`` (default: the installed torch); the 2.9 rename decides."""
    version = version if version is not None else torch_version()
    if _at_least(version, 2, 9):
        return FrNames("TORCH_FR_BUFFER_SIZE", "TORCH_FR_DUMP_TEMP_FILE")
    return FrNames("TORCH_NCCL_TRACE_BUFFER_SIZE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE")


def fr_environment(prefix: str, env: dict[str, str], version: str | None = None) -> dict[str, str]:
    """Variables to add so a hang leaves dumps at ``<prefix><rank>`` (what the user set already wins)."""
    names = fr_names(version)
    wanted = {names.buffer_size: DEFAULT_BUFFER, names.dump_file: prefix, names.dump_on_timeout: "1",
              names.pipe_file: prefix + "pipe_"}
    old_or_new = {"TORCH_FR_BUFFER_SIZE": "TORCH_NCCL_TRACE_BUFFER_SIZE",
                  "TORCH_FR_DUMP_TEMP_FILE": "TORCH_NCCL_DEBUG_INFO_TEMP_FILE"}
    aliases = {**old_or_new, **{v: k for k, v in old_or_new.items()}}
    return {k: v for k, v in wanted.items() if k not in env and aliases.get(k) not in env}


def dump_prefix(env: dict[str, str]) -> str:
    """Where a process with environment ``env`` writes its dumps (torch's default is /tmp/nccl_trace_rank_)."""
    return env.get("TORCH_FR_DUMP_TEMP_FILE") or env.get("TORCH_NCCL_DEBUG_INFO_TEMP_FILE") or "/tmp/nccl_trace_rank_"


def trigger_dumps(env: dict[str, str], ranks: list[int]) -> list[str]:
    """Ask live ranks to dump now by writing to their debug-info pipes (``<stem><rank>.pipe``, NCCL only).

    Returns the pipes written. A rank whose torch has no pipe (CPU builds, gloo) simply has none.
    """
    stem = env.get("TORCH_NCCL_DEBUG_INFO_PIPE_FILE")
    written: list[str] = []
    if not stem:
        return written
    for rank in ranks:
        path = f"{stem}{rank}.pipe"
        try:
            if not stat.S_ISFIFO(os.stat(path).st_mode):
                continue
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader (not yet created, or the rank is gone)
            continue
        try:
            os.write(fd, b"1\n")
            written.append(path)
        except OSError:
            pass
        finally:
            os.close(fd)
    return written


def load_dump(path: str | Path) -> dict[str, Any]:
    """Read one rank's dump; DumpError when it is not a plain-data dump of the expected shape."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_DUMP_BYTES:
            raise DumpError(f"{path}: {size} bytes, larger than the {MAX_DUMP_BYTES} byte limit for a dump")
        data = safe_loads(path.read_bytes())
    except OSError as exc:
        raise DumpError(f"{path}: cannot read: {exc.strerror}") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError, AttributeError,
            OverflowError, MemoryError, RecursionError) as exc:  # malformed opcodes, absurd declared lengths
        raise DumpError(f"{path}: not a flight recorder dump: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("entries", []), list):
        raise DumpError(f"{path}: expected a dict with an `entries` list (a flight recorder dump)")
    return data


def find_dumps(prefix: str) -> dict[int, Path]:
    """Rank -> dump file for files named ``<prefix><rank>``."""
    base = Path(prefix)
    folder, stem = (base, "") if prefix.endswith(os.sep) else (base.parent, base.name)
    found: dict[int, Path] = {}
    if not folder.is_dir():
        return found
    pattern = re.compile(re.escape(stem) + r"(\d+)$")
    for path in folder.iterdir():
        match = pattern.match(path.name)
        if match and path.is_file():
            found[int(match[1])] = path
    return found


def _op(entry: dict) -> str:
    name = str(entry.get("profiling_name", "?"))
    return name.split(":", 1)[1] if ":" in name else name


def _describe(entry: dict) -> str:
    dtypes = entry.get("input_dtypes")
    dtypes = ",".join(map(str, dtypes)) if isinstance(dtypes, (list, tuple)) else ""
    return f"{_op(entry)} {entry.get('input_sizes', '')} {dtypes}".strip()


def _pg(entry: dict) -> str:
    group = entry.get("process_group") or ("", "")
    return str(group[0]) if isinstance(group, (list, tuple)) and group else str(group)


def _by_seq(dump: dict) -> dict[str, dict[int, dict]]:
    """pg name -> collective_seq_id -> last entry with it (p2p entries are skipped)."""
    out: dict[str, dict[int, dict]] = {}
    for entry in dump.get("entries") or []:
        if isinstance(entry, dict) and not entry.get("is_p2p") and isinstance(entry.get("collective_seq_id"), int):
            out.setdefault(_pg(entry), {})[entry["collective_seq_id"]] = entry
    return out


def _seq_or(value: Any, default: int) -> int:
    """A sequence number from a dump's status, or ``default`` when it is missing or not an integer."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _rank_summary(rank: int, dump: dict, pg: str) -> dict[str, Any]:
    seqs = _by_seq(dump).get(pg, {})
    statuses = dump.get("pg_status")
    status = statuses.get(pg) if isinstance(statuses, dict) else None
    status = status if isinstance(status, dict) else {}
    entered = _seq_or(status.get("last_enqueued_collective"), max(seqs, default=-1))
    done_states = [s for s, e in seqs.items() if e.get("state") == "completed"]
    completed = _seq_or(status.get("last_completed_collective"), max(done_states, default=-1))
    return {"rank": rank, "process_group": pg,
            "last_entered_seq": entered, "last_entered_op": _op(seqs[entered]) if entered in seqs else None,
            "last_completed_seq": completed, "last_completed_op": _op(seqs[completed]) if completed in seqs else None}


def analyse(dumps: dict[int, dict]) -> dict[str, Any]:
    """Facts from the dumps: each rank's last entered/completed collective and the first disagreement."""
    per_rank = {rank: _by_seq(dump) for rank, dump in dumps.items()}
    groups = sorted({pg for seqs in per_rank.values() for pg in seqs}, key=lambda g: (g != "0", g))
    summaries = [_rank_summary(rank, dumps[rank], pg) for pg in groups[:1] for rank in sorted(dumps)]
    first: dict[str, Any] | None = None
    for pg in groups:
        views = {rank: seqs.get(pg, {}) for rank, seqs in per_rank.items()}
        window_start = max((min(v) for v in views.values() if v), default=0)  # older entries may have rotated out
        for seq in sorted({s for v in views.values() for s in v if s >= window_start}):
            have = {rank: _describe(v[seq]) for rank, v in views.items() if seq in v}
            missing = sorted(set(views) - set(have))
            if missing or len(set(have.values())) > 1:
                first = {"process_group": pg, "seq": seq, "kind": "missing" if missing and len(set(have.values())) == 1
                         else "mismatch", "by_rank": {str(r): d for r, d in sorted(have.items())},
                         "missing_ranks": missing}
                break
        if first:
            break
    facts: dict[str, Any] = {"live.fr_dumps": len(dumps), "live.fr_ranks": summaries}
    if first:
        facts["live.fr_first_mismatch"] = first
        facts.update(_hits(first))
    return facts


def _hits(first: dict[str, Any]) -> dict[str, list[dict]]:
    ops = "; ".join(f"rank {r}: {d}" for r, d in first["by_rank"].items())
    if first["kind"] == "missing":
        entered = ", ".join(first["by_rank"])
        return {"live.collective-timeout": [{
            "detail": f"flight recorder: collective #{first['seq']} ({next(iter(first['by_rank'].values()))}) was "
                      f"entered by rank(s) {entered} but never by rank {r}", "rank": r, "source": "flight-recorder",
            "order": 0, "vars": {"seq": first["seq"]}} for r in first["missing_ranks"]]}
    return {"live.collective-mismatch": [{
        "detail": f"flight recorder: at collective #{first['seq']} the ranks disagree: {ops}", "rank": None,
        "source": "flight-recorder", "order": 0, "vars": {"seq": first["seq"]}}]}


def read_dumps(prefix: str, since: float | None = None) -> tuple[dict[str, Any], list[str]]:
    """Facts from the dumps at ``prefix`` (empty when none) and the files that could not be read.

    ``since`` (a wall-clock time) skips older dumps: those of an earlier job with the same prefix.
    Each refused file is also a ``live.flight-recorder-dump-refused`` hit in the facts.
    """
    dumps: dict[int, dict] = {}
    problems: list[str] = []
    refused: list[dict[str, Any]] = []
    for rank, path in sorted(find_dumps(prefix).items()):
        if since is not None and path.stat().st_mtime < since:
            continue
        try:
            dumps[rank] = load_dump(path)
        except DumpError as exc:
            problems.append(str(exc))
            refused.append({"detail": f"refused {exc}", "rank": rank, "path": str(path), "source": "flight-recorder"})
    facts = analyse(dumps) if dumps else {}
    if dumps:
        facts["live.fr_prefix"] = prefix
    if refused:
        facts[REFUSED] = refused
    return facts, problems
