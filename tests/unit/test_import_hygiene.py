"""Fast paths stay fast: --help, --list-probes, rules check and the core never import torch or textual."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = "import sys; from troubleshooter.cli import main; rc = main({argv!r}); " \
        "print('TORCH' if 'torch' in sys.modules else 'NOTORCH', 'TEXTUAL' if 'textual' in sys.modules else 'NOTEXTUAL')"


@pytest.mark.parametrize("argv", [["--help"], ["--list-probes"], ["rules", "list"], ["--version"]])
def test_no_torch_no_textual(argv: list[str]) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "NOTORCH NOTEXTUAL", out.stderr


def test_core_modules_import_without_textual() -> None:
    code = ("import sys, troubleshooter.core.engine, troubleshooter.run.session, troubleshooter.report.render, troubleshooter.run.plan, troubleshooter.cli.auto, "
            "troubleshooter.run.local_world; print('textual' in sys.modules, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False False", out.stderr
