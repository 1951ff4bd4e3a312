"""A non-editable wheel works from any directory: rules/, probes/ and templates/ ship inside it."""

from __future__ import annotations

import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_installs_and_finds_its_data(tmp_path: Path) -> None:
    wheel_dir = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheel_dir), str(ROOT)],
                   check=True, timeout=300)
    [wheel] = wheel_dir.glob("ddp_troubleshooter-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    purelib = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # dependencies come from this interpreter's site-packages, appended after the venv's own
    deps = [p for p in {sysconfig.get_paths()["purelib"], *site.getsitepackages()} if Path(p).is_dir()]
    Path(purelib, "zz_deps.pth").write_text("\n".join(deps) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", purelib, str(wheel)],
                   check=True, timeout=300)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run([py, "-c", "import troubleshooter.core.paths as p; print(p.rules_dir()); print(p.templates_dir())"],
                           cwd=elsewhere, capture_output=True, text=True, check=True).stdout.split()
    assert all(w.startswith(purelib) for w in where), where
    out = subprocess.run([py, "-m", "troubleshooter", "rules", "check"], cwd=elsewhere, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok: ")
    probes = subprocess.run([py, "-m", "troubleshooter", "--list-probes"], cwd=elsewhere, capture_output=True,
                            text=True, timeout=120)
    assert probes.returncode == 0 and probes.stdout.strip(), probes.stderr
