"""Multi-line structures in distributed-training logs: who failed, how, and with which traceback.

- torchrun's ``ChildFailedError`` summary (``Failures:`` / ``Root Cause (first observed
  failure):`` records of ``time, host, rank (local_rank), exitcode (pid), error_file,
  traceback``);
- OpenMPI's "first process to do so was: Process name: [[job,vpid],R] / Exit code: N";
- one-line exits: torchrun ``failed (exitcode: N) local_rank: L``, ``srun: error: host: task R:
  Exited with exit code N``, ``mpirun noticed that process rank R … exited on signal S``, DeepSpeed's
  ``sigkill_handler] [...] exits with return code = N``;
- each rank's last Python exception line (the end of its traceback).

The grammar of these launcher formats is fixed, so it lives here rather than in the
signature library. Every line it needs outside a summary contains one of :data:`ANCHORS`;
while a torchrun summary is open (:attr:`BlockTracker.open`) it must see every line.
"""

from __future__ import annotations

import re
import signal as _signal
from dataclasses import dataclass, field
from typing import Any

ANCHORS = (
    "ChildFailedError", "Root Cause (first observed failure)",
    "Error", "Exception", "Traceback (most recent", "failed (exitcode:", "first process to do so was",
    "Exited with exit code", ": Killed", "Segmentation fault", ": Bus error", ": Aborted", ": Terminated",
    "Out Of Memory", "mpirun noticed", '", line ', ", in ", "exits with return code",
    "StopIteration", "SystemExit", "KeyboardInterrupt", "terminated with", "finished with exit code", "exited with non-zero status",
)
MAX_BLOCK_LINES = 2000
_FIELD = re.compile(r"^(?P<key>time|host|rank|exitcode|error_file|traceback)\s*:\s?(?P<value>.*)$")
_RANK_VALUE = re.compile(r"^(?P<rank>-?\d+)(?: \(local_rank: (?P<local>\d+)\))?")
_EXIT_VALUE = re.compile(r"^(?P<code>-?\d+)(?: \(pid: (?P<pid>\d+)\))?")
# a traceback frame: CPython's ``File "x.py", line 12, in f`` or IPython/Jupyter's ``File ~/x.py:12, in f``
_FRAME = re.compile(r'^File (?:"(?P<file>[^"]+)", line (?P<line>\d+)|(?P<ifile>\S+):(?P<iline>\d+), in )')
# an exception line; Ray wraps the worker's exception type in its own: ``RayTaskError(ValueError): ...``
_EXCEPTION = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Interrupt)|Exception|StopIteration|SystemExit))"
                        r"(?:\([\w.]+\))?(?::|$)")
# right after a traceback's frames, any exception class ends it (``socket.timeout: timed out``, ``queue.Empty``,
# ``BackendCompilerFailed: ...``): a dotted name, or a capitalised one with a lower-case letter (not a logger's
# ``INFO:``), alone or before a colon
_EXCEPTION_AFTER_FRAME = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*|[A-Z]\w*[a-z]\w*)(?:\([\w.]+\))?(?::\s|:?$)")
AFTER_FRAME_LINES = 3  # lines after a frame where its exception line may be (the source line, a caret line)
# Python's reports of an exception it swallowed (the unraisable hook, atexit handlers), and the elastic agent's
# logged exit-barrier error (its workers already finished): the traceback that follows ended nothing, so its
# exception is not a failure of the run.
_SWALLOWED = re.compile(r"^(?:Exception ignored (?:in|on|while)\b|Error in atexit\._run_exitfuncs:"
                        r"|.*\bError waiting on exit barrier\b)")
_ONE_LINE_EXITS = (
    (re.compile(r"failed \(exitcode: (?P<code>-?\d+)\) local_rank: (?P<local>\d+) \(pid: (?P<pid>\d+)\)"), "torchrun"),
    (re.compile(r"srun: error: (?P<host>[\w.-]+): tasks? (?P<rank>\d+)(?:-\d+)?: "
                r"(?:Exited with exit code (?P<code>\d+)|(?P<signame>Killed|Segmentation fault|Bus error|Aborted|Terminated|Out Of Memory))"),
     "srun"),
    (re.compile(r"mpirun noticed that process rank (?P<rank>\d+) with PID (?P<pid>\d+) on node (?P<host>\S+) "
                r"exited on signal (?P<signum>\d+)"), "mpirun"),
    (re.compile(r"sigkill_handler\].*exits with return code = (?P<code>-?\d+)"), "deepspeed"),
    (re.compile(r"[Pp]rocess (?P<local>\d+) terminated with (?:exit code (?P<code>-?\d+)|signal (?P<signame>SIG[A-Z]+)"
                r"|the following error)"), "mp.spawn"),
    # an IDE's run console (PyCharm) and GNU time report the script's own non-zero exit
    (re.compile(r"^Process finished with exit code (?P<code>-?[1-9]\d*)\b|^Command exited with non-zero status (?P<status>\d+)"),
     "shell"),
)
# the launcher's own exceptions (raised in the agent after a worker failed): not a worker's first error
_LAUNCHER_EXCEPTIONS = ("ChildFailedError", "SignalException")
_SIGNAL_NAMES = {"Killed": 9, "Segmentation fault": 11, "Bus error": 7, "Aborted": 6, "Terminated": 15}
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
        if _SWALLOWED.match(body):
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
            worker = not exc.group("type").endswith(_LAUNCHER_EXCEPTIONS)
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
        for regex, launcher in _ONE_LINE_EXITS:
            match = regex.search(body)
            if not match or len(self.failures) >= MAX_RECORDS:
                continue
            g = match.groupdict()
            code = int(g["code"]) if g.get("code") else int(g["status"]) if g.get("status") else None
            if g.get("signum"):
                code = -int(g["signum"])
            elif (g.get("signame") or "").startswith("SIG") and g["signame"] in _signal.Signals.__members__:
                code = -_signal.Signals[g["signame"]].value
            elif g.get("signame"):
                code = -_SIGNAL_NAMES.get(g["signame"], 9) if g["signame"] != "Out Of Memory" else -9
            elif launcher == "mp.spawn" and code is None:
                code = 1  # "terminated with the following error": the rank raised
            self.failures.append(Failure(
                rank=int(g["rank"]) if g.get("rank") else None, local_rank=int(g["local"]) if g.get("local") else None,
                host=g.get("host"), exit_code=code, pid=int(g["pid"]) if g.get("pid") else None,
                launcher=launcher, path=path, line=line))

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
