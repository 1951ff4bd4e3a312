"""The first screen must not import torch; and nothing outside tui/ imports textual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CHILD = r"""
import sys
from troubleshooter.tui.app import TroubleshooterApp

class FirstPaint(TroubleshooterApp):
    def on_mount(self):  # runs after TroubleshooterApp.on_mount (Textual calls both)
        self.call_after_refresh(self.painted)
    def painted(self):
        print("first paint:", "TORCH" if "torch" in sys.modules else "NO-TORCH")
        self.set_interval(0.05, self.loaded)
    def loaded(self):  # rules and probe plugins loaded behind the first screen
        if self.investigation is not None:
            self.exit(0)

app = FirstPaint(offer_resume=False)
app.run(headless=True, size=(80, 24))
print("loaded:", "TORCH" if "torch" in sys.modules else "NO-TORCH", app.return_code)
"""


def test_first_screen_does_not_import_torch(tmp_path):
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60,
                         env={"TROUBLESHOOTER_STATE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin",
                              "HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert "first paint: NO-TORCH" in out.stdout and "loaded: NO-TORCH 0" in out.stdout, out.stdout + out.stderr


def test_only_tui_imports_textual():
    package = Path(__file__).resolve().parents[2] / "troubleshooter"
    offenders = [str(p.relative_to(package)) for p in package.rglob("*.py")
                 if "tui" not in p.relative_to(package).parts and "textual" in p.read_text(encoding="utf-8")
                 and any(line.lstrip().startswith(("import textual", "from textual"))
                         for line in p.read_text(encoding="utf-8").splitlines())]
    assert offenders == []


@pytest.mark.parametrize("module", ["troubleshooter.tui.model", "troubleshooter.tui.recovery",
                                    "troubleshooter.tui.environment", "troubleshooter.run.plan"])
def test_headless_modules_do_not_need_textual(module):
    code = f"import sys, {module}; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
