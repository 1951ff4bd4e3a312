"""The recovery file: the TUI saves the investigation after every answer, so quitting or a crash loses nothing.

Location: ``$TROUBLESHOOTER_STATE_DIR/recovery.json``, else ``$XDG_CACHE_HOME/ddp-troubleshooter/``
(default ``~/.cache/ddp-troubleshooter/``). Written atomically, readable only by the user
(probe facts can hold environment values), secrets redacted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from troubleshooter.report.redact import redact

FILE_NAME = "recovery.json"


def state_dir() -> Path:
    """Where the TUI keeps its state."""
    if os.environ.get("TROUBLESHOOTER_STATE_DIR"):
        return Path(os.environ["TROUBLESHOOTER_STATE_DIR"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "ddp-troubleshooter"


def recovery_path() -> Path:
    """The recovery file."""
    return state_dir() / FILE_NAME


def save(state: dict[str, Any], path: Path | None = None) -> Path:
    """Write ``state`` atomically (temp file, fsync, rename); returns the path."""
    path = path or recovery_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(redact(state), handle, default=str)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)
    return path


def load(path: Path | None = None) -> dict[str, Any] | None:
    """The saved state, or None when there is none (an unreadable file counts as none)."""
    path = path or recovery_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def clear(path: Path | None = None) -> None:
    """Forget the saved state (after a clean export-and-quit, or when the user declines to resume)."""
    try:
        (path or recovery_path()).unlink()
    except FileNotFoundError:
        pass
