"""Time to the first screen of the troubleshooter TUI against a minimal Textual app, measured the same way.

Each app runs in a fresh interpreter (headless, 80×24) and prints the wall-clock time of its first
refresh; the parent subtracts the moment it spawned the process. Runs are interleaved so both see
the same machine load. Target: median(troubleshooter) ≤ 1.5 × median(minimal).

    python bench/tui_first_paint.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

MINIMAL = r"""
import time
from textual.app import App
from textual.widgets import Footer, Header, OptionList, Static

class Minimal(App):
    def compose(self):
        yield Header(); yield Static("hello"); yield OptionList("a", "b", "c"); yield Footer()
    def on_mount(self):
        self.call_after_refresh(self.painted)
    def painted(self):
        print(f"PAINT {time.time():.6f}", flush=True); self.exit()

Minimal().run(headless=True, size=(80, 24))
"""

TROUBLESHOOTER = r"""
import sys, time
from troubleshooter.tui.app import TroubleshooterApp

class FirstPaint(TroubleshooterApp):
    def on_mount(self):  # after TroubleshooterApp.on_mount pushed the home screen
        self.call_after_refresh(self.painted)
    def painted(self):
        print(f"PAINT {time.time():.6f} torch={'torch' in sys.modules}", flush=True); self.exit()

FirstPaint(offer_resume=False).run(headless=True, size=(80, 24))
"""

TARGET = 1.5


def first_paint(code: str, env: dict[str, str]) -> tuple[float, str]:
    """Seconds from spawning ``code`` to its first paint, and the rest of its PAINT line."""
    start = time.time()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    line = next((l for l in out.stdout.splitlines() if l.startswith("PAINT ")), None)
    if line is None:
        raise SystemExit(f"the app did not report a first paint:\n{out.stdout}\n{out.stderr}")
    _, stamp, *rest = line.split()
    return float(stamp) - start, " ".join(rest)


def main() -> int:
    """Run the benchmark; exit 1 when the target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as state:
        env = {**os.environ, "TROUBLESHOOTER_STATE_DIR": state}
        first_paint(MINIMAL, env)  # warm the file cache for both
        first_paint(TROUBLESHOOTER, env)
        minimal, ours, notes = [], [], set()
        for _ in range(args.runs):
            minimal.append(first_paint(MINIMAL, env)[0])
            seconds, note = first_paint(TROUBLESHOOTER, env)
            ours.append(seconds)
            notes.add(note)
    m, t = statistics.median(minimal), statistics.median(ours)
    ratio = t / m
    print(f"minimal Textual app : median {m * 1000:6.0f} ms  ({', '.join(f'{x * 1000:.0f}' for x in minimal)})")
    print(f"troubleshooter TUI  : median {t * 1000:6.0f} ms  ({', '.join(f'{x * 1000:.0f}' for x in ours)})")
    print(f"ratio {ratio:.2f} (target ≤ {TARGET}); at first paint: {', '.join(sorted(notes))}")
    return 0 if ratio <= TARGET and notes == {"torch=False"} else 1


if __name__ == "__main__":
    sys.exit(main())
