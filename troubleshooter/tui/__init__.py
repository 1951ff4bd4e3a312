"""The interactive troubleshooter (Textual). The only package that imports textual.

``troubleshoot`` with no arguments calls :func:`run_app`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from troubleshooter.run.options import RunOptions


def run_app(options: RunOptions) -> int:
    """Run the TUI until the user quits; the exit code (2 when the rules could not be loaded)."""
    from troubleshooter.tui.app import TroubleshooterApp

    app = TroubleshooterApp(options=options)
    code = app.run()
    if app.fatal_message:
        print(f"troubleshoot: {app.fatal_message}", file=sys.stderr)
    return int(code) if code is not None else (app.return_code or 0)
