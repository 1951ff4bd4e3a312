"""Write a command's output (``-o PATH``) without damaging what is at the path.

A regular file (or a new path) is replaced atomically: temporary file in the same directory,
fsync, rename, keeping the old file's mode. Anything else that is not a directory (a FIFO,
a character device, ``/dev/stdout``) is written through, never replaced. A directory and a
read-only file are refused (exit 2) and nothing is left behind. ``-`` or no path is stdout.
Every output passes the redaction of :mod:`troubleshooter.report.redact` on its way out, and its
control characters are made visible (:mod:`troubleshooter.report.inert`; the tool's own colours
stay on a terminal).
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from troubleshooter.core.errors import UsageError
from troubleshooter.report.inert import visible, visible_keeping_colour
from troubleshooter.report.redact import redact_text


def write_output(text: str, output: str | None) -> None:
    """Write ``text`` (secrets masked, control characters visible) to ``output``, or stdout for None or ``-``."""
    to_stdout = not output or output == "-"
    text = redact_text(text)
    text = visible_keeping_colour(text) if to_stdout and sys.stdout.isatty() else visible(text)
    text = text if text.endswith("\n") else text + "\n"
    if to_stdout:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    path = Path(os.path.realpath(output))
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise UsageError(f"{output}: cannot write: {exc.strerror}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise UsageError(f"{output}: is a directory; give a file name")
    data = text.encode("utf-8")
    if mode is not None and not stat.S_ISREG(mode):
        _write_through(path, data, output)
    else:
        if mode is not None and (not mode & 0o222 or not os.access(path, os.W_OK)):
            raise UsageError(f"{output}: the file is read-only; remove it or make it writable (chmod u+w)")
        _replace(path, data, mode, output)


def _write_through(path: Path, data: bytes, output: str) -> None:
    """A FIFO or device: open it for writing (no create, no truncate of anything else) and write."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOCTTY)
    except OSError as exc:
        raise UsageError(f"{output}: cannot write: {exc.strerror}") from None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise UsageError(f"{output}: cannot write: {exc.strerror}") from None
    finally:
        os.close(fd)


def _replace(path: Path, data: bytes, mode: int | None, output: str) -> None:
    """Write a temporary file beside ``path`` and rename it over (mode kept, or the umask default)."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise UsageError(f"{output}: cannot write: {exc.strerror}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
