"""Multi-line structures in distributed-training logs: who failed, how, and with which traceback.

- torchrun's ``ChildFailedError`` summary (``Failures:`` / ``Root Cause (first observed
  failure):`` records of ``time, host, rank (local_rank), exitcode (pid), error_file,
  traceback``);
- OpenMPI's "first process to do so was: Process name: [[job,vpid],R] / Exit code: N";
- one-line exits (torchrun ``failed (exitcode: N) local_rank: L``, ``srun: error: host: task R: Killed``...):
  their wordings are ``rank_exits`` of rules/symptoms.yaml, with the words for signals and the reports of an
  exception Python swallowed;
- each rank's last Python exception line (the end of its traceback).

The grammar of torchrun's and Open MPI's summaries and of Python's tracebacks is fixed, so it lives here. Every
line it needs outside a summary contains one of :data:`ANCHORS` or of the rank exits' anchors; while a summary
is open (:attr:`BlockTracker.open`) it must see every line.
"""

from __future__ import annotations

import re
import signal as _signal
from dataclasses import dataclass, field
from typing import Any

from troubleshooter.logs.symptomwords import SymptomWords, shipped_words

ANCHORS = (
    "ChildFailedError", "Root Cause (first observed failure)", "Error", "Exception", "Traceback (most recent",
    "first process to do so was", '", line ', ", in ", "StopIteration", "SystemExit", "KeyboardInterrupt",
)
MAX_BLOCK_LINES = 2000
_FIELD = re.compile(r"^(?P<key>time|host|rank|exitcode|error_file|traceback)\s*:\s?(?P<value>.*)$")
_RANK_VALUE = re.compile(r"^(?P<rank>-?\d+)(?: \(local_rank: (?P<local>\d+)\))?")
_EXIT_VALUE = re.compile(r"^(?P<code>-?\d+)(?: \(pid: (?P<pid>\d+)\))?")
# a traceback frame: CPython's ``File "x.py", line 12, in f`` or IPython/Jupyter's ``File ~/x.py:12, in f``
_FRAME = re.compile(r'^File (?:"(?P<file>[^"]+)", line (?P<line>\d+)|(?P<ifile>\S+):(?P<iline>\d+), in )')
# an exception line; Ray wraps the worker's exception type in its own: ``RayTaskError(ValueError): ...``
_EXCEPTION = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Interrupt)|Exception|StopIteration|SystemExit))"
                        r"(?:\((?:\w+\.)*[A-Z]\w*\))?(?::|$)")
# right after a traceback's frames, any exception class ends it (``socket.timeout: timed out``, ``queue.Empty``,
# ``BackendCompilerFailed: ...``): a dotted name, or a capitalised one with a lower-case letter (not a logger's
# ``INFO:``), alone or before a colon; a wrapped type in parentheses is a class's (``RayTaskError(ValueError)``),
# never a call's arguments (the source line ``subprocess.run(command)`` under its frame is no exception)
_EXCEPTION_AFTER_FRAME = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*|[A-Z]\w*[a-z]\w*)(?:\((?:\w+\.)*[A-Z]\w*\))?"
                                    r"(?::\s|:?$)")
AFTER_FRAME_LINES = 3  # lines after a frame where its exception line may be (the source line, a caret line)
MAX_RECORDS = 256


def signal_name(code: int | None) -> str | None:
    """``-9`` -> ``SIGKILL`` (negative exit codes are signals, as torchrun reports them)."""
    if code is None or code >= 0:
        return None
    try:
        return _signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


@dataclass
class Failure:
    """One failed process as a launcher reported it."""

    rank: int | None = None
    local_rank: int | None = None
    host: str | None = None
    exit_code: int | None = None
    pid: int | None = None
    traceback: str | None = None
    error_file: str | None = None
    time: str | None = None
    root: bool = False
    launcher: str = ""
    path: str | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict without empty fields; adds ``signal`` for negative exit codes."""
        data = {k: v for k, v in self.__dict__.items() if v is not None and v != "" and v is not False}
        sig = signal_name(self.exit_code)
        if sig:
            data["signal"] = sig
        return data


@dataclass
class BlockTracker:
    """Follows the launcher summaries across (candidate) lines; collects failures and exceptions."""

    words: SymptomWords = field(default_factory=shipped_words)  # rank exits, signal words, swallowed exceptions
    failures: list[Failure] = field(default_factory=list)
    exceptions: dict[Any, dict[str, Any]] = field(default_factory=dict)
    first_exception: dict[str, Any] | None = None   # the earliest exception that ended a traceback
    earliest_exception: dict[str, Any] | None = None  # the earliest exception line of any kind
    dangling_frame: dict[str, Any] | None = None  # the last traceback frame no exception line closed
    launcher_exception: dict[str, Any] | None = None  # the first exception the launcher itself raised
    _frames: dict[Any, str] = field(default_factory=dict)  # rank -> innermost "file:line" of its open traceback
    _swallowed: set = field(default_factory=set)  # ranks whose next exception Python reported as ignored
    _after_frame: dict[Any, int] = field(default_factory=dict)  # rank -> lines left where a frame's exception may be
    _section: str | None = None
    _current: Failure | None = None
    _mpi: Failure | None = None
    _block_lines: int = 0
    _mpi_lines: int = 0

    @property
    def open(self) -> bool:
        """True inside a torchrun or OpenMPI failure summary, or just after a traceback frame (its exception line
        may carry no anchor): the caller must feed every line until it closes."""
        return self._section is not None or self._mpi is not None or bool(self._after_frame)

    def context_rank(self) -> int | None:
        """The rank of the summary record being read (lines inside it belong to that rank)."""
        return self._current.rank if self._current is not None else None

    def feed(self, body: str, rank: int | None, path: str, line: int) -> None:
        """Read one line (prefixes already removed)."""
        if "ChildFailedError" in body or body.startswith("Failures:"):
            self._section = "failures"
            self._current = None
        elif body.startswith("Root Cause (first observed failure)"):
            self._section = "root"
            self._current = None
        elif body.startswith("=====") and self._section == "root" and self._current is not None \
                or self._block_lines > MAX_BLOCK_LINES:
            self._section, self._current = None, None
        elif self._section is not None:
            self._field(body, path, line)
        self._block_lines = self._block_lines + 1 if self._section is not None else 0
        self._one_line(body, rank, path, line)
        self._mpi_block(body, path, line)
        if self.words.swallowed.match(body):
            self._swallowed.add(rank)
            return
        frame = _FRAME.match(body)
        if frame:
            if len(self._frames) < MAX_RECORDS or rank in self._frames:
                self._frames[rank] = f"{frame.group('file') or frame.group('ifile')}:{frame.group('line') or frame.group('iline')}"
                self.dangling_frame = {"where": self._frames[rank], "rank": rank, "path": path, "line": line}
                self._after_frame[rank] = AFTER_FRAME_LINES
            return
        exc = _EXCEPTION.match(body)
        if rank in self._after_frame:
            left = self._after_frame.pop(rank) - 1
            exc = exc or _EXCEPTION_AFTER_FRAME.match(body)
            if exc is None and left:
                self._after_frame[rank] = left
        if exc and rank in self._swallowed:
            self._swallowed.discard(rank)
            self._frames.pop(rank, None)
            self.dangling_frame = None
            return
        if exc and len(self.exceptions) < MAX_RECORDS or exc and rank in self.exceptions:
            key = self.context_rank() if self._current is not None else rank
            record = {"text": body[:500], "type": exc.group("type"), "path": path, "line": line}
            if rank in self._frames:
                record["where"] = self._frames.pop(rank)
                self.dangling_frame = None
            self.exceptions[key] = record
            worker = not exc.group("type").endswith(self.words.launcher_exceptions)
            if worker and "where" in record and self.first_exception is None:
                self.first_exception = dict(record, rank=key)
            if worker and self.earliest_exception is None:
                self.earliest_exception = dict(record, rank=key)
            elif not worker and self.launcher_exception is None:
                self.launcher_exception = dict(record, rank=key)
            if self._current is not None and self._current.traceback and not self._current.traceback.startswith(body):
                self._current.traceback = body[:500]

    def _field(self, body: str, path: str, line: int) -> None:
        match = _FIELD.match(body)
        if not match:
            return
        key, value = match.group("key"), match.group("value").strip()
        if key == "time" or self._current is None:
            if len(self.failures) >= MAX_RECORDS:
                return
            self._current = Failure(root=self._section == "root", launcher="torchrun", path=path, line=line)
            self.failures.append(self._current)
        cur = self._current
        if key == "time":
            cur.time = value
        elif key == "host":
            cur.host = value
        elif key == "rank" and (m := _RANK_VALUE.match(value)):
            cur.rank = int(m.group("rank"))
            cur.local_rank = int(m.group("local")) if m.group("local") else None
        elif key == "exitcode" and (m := _EXIT_VALUE.match(value)):
            cur.exit_code = int(m.group("code"))
            cur.pid = int(m.group("pid")) if m.group("pid") else None
        elif key == "error_file":
            cur.error_file = value
        elif key == "traceback":
            cur.traceback = value[:500]

    def _one_line(self, body: str, rank: int | None, path: str, line: int) -> None:
        for report in self.words.rank_exits:
            match = report.regex.search(body)
            if not match or len(self.failures) >= MAX_RECORDS:
                continue
            g = match.groupdict()
            self.failures.append(Failure(
                rank=int(g["rank"]) if g.get("rank") else None, local_rank=int(g["local"]) if g.get("local") else None,
                host=g.get("host"), exit_code=self._exit_code(g, report.code),
                pid=int(g["pid"]) if g.get("pid") else None, launcher=report.launcher, path=path, line=line))

    def _exit_code(self, groups: dict[str, str | None], default: int | None) -> int | None:
        """A rank exit's code: a signal's negated (by number, name or the launcher's word), else the exit code."""
        if groups.get("signum"):
            return -int(groups["signum"])
        name = groups.get("signame")
        if name:
            number = self.words.signal_words.get(name) or (
                _signal.Signals[name].value if name in _signal.Signals.__members__ else None)
            return -number if number else None
        return int(groups["code"]) if groups.get("code") else default

    def _mpi_block(self, body: str, path: str, line: int) -> None:
        """OpenMPI: "The first process to do so was:" / "Process name: [[job,vpid],R]" / "Exit code: N"."""
        if "first process to do so was" in body:
            self._mpi = Failure(launcher="mpirun", path=path, line=line)
            self._mpi_lines = 0
        elif self._mpi is None:
            return
        elif body.startswith("Process name:"):
            match = re.search(r"\[\[\d+,\d+\],(\d+)\]", body)
            self._mpi.rank = int(match.group(1)) if match else None
        elif body.startswith("Exit code:"):
            match = re.match(r"Exit code:\s*(-?\d+)", body)
            if match and len(self.failures) < MAX_RECORDS:
                self._mpi.exit_code = int(match.group(1))
                self.failures.append(self._mpi)
            self._mpi = None
        else:
            self._mpi_lines += 1
            if self._mpi_lines > 12:  # not the summary after all
                self._mpi = None
