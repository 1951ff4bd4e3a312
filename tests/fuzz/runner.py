"""Run one input through a target with a time bound; classify the outcome."""

from __future__ import annotations

import hashlib
import signal
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tests.fuzz.targets import CORPUS, HANG_S, Target


class Hang(Exception):
    """The target ran longer than its bound on one input."""


@contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in the main thread after ``seconds`` (SIGALRM; POSIX only)."""
    def alarm(_signum, _frame):
        raise Hang(f"no answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def problem(target: Target, data: bytes, bound: float = HANG_S) -> str | None:
    """None when ``target`` handles ``data`` (returns or raises a documented error), else what went wrong."""
    try:
        with time_bound(bound):
            target.run(data)
    except target.allowed:
        return None
    except Hang as exc:
        return f"hang: {exc}"
    except RecursionError:
        return "RecursionError\n" + "".join(traceback.format_exc(limit=-4))
    except Exception as exc:  # noqa: BLE001 - every other exception is a finding
        return f"{type(exc).__name__}: {exc}\n" + "".join(traceback.format_exc(limit=-4))
    return None


def save_crash(target: Target, data: bytes) -> Path:
    """Keep a failing input under tests/fuzz/corpus/<target>/ (replayed by test_corpus.py)."""
    folder = CORPUS / target.name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"crash-{hashlib.sha1(data).hexdigest()[:16]}"
    path.write_bytes(data)
    return path
