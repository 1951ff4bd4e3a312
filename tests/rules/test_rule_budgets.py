"""Hostile rule directories (issue 13 item 5) are refused fast, with file:line and exit 2, on every command.

Each directory below reproduces one way a shared ``--rules DIR`` could hang or crash the tool:
an alias tree in a check's ``when`` or a finding's ``references``, a ``fix`` template of nested
loops, a signature regex with catastrophic backtracking, a 5000-digit number in a condition, and
a rule file placed where no section reads it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

TIMEOUT_S = 30  # a hang fails the test instead of blocking the suite
FAST_S = 8.0  # generous for a loaded CI machine; bench numbers are in docs/RULES.md


def _bomb(levels: int, leaf: str) -> list[str]:
    """Anchors a0..aN, each a list of nine aliases of the previous one (9**N nodes once expanded)."""
    lines = [f"&a0 {leaf}"]
    lines += [f"&a{i} {{all: [{', '.join([f'*a{i - 1}'] * 9)}]}}" for i in range(1, levels + 1)]
    return lines


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


FINDING = "id: {id}\ntitle: t\nseverity: warning\ncategory: code\nwhy: w\nfix: {fix}\nreferences: [{refs}]\n"
SIGNATURE = ("group: site\ndoc: d\nsignatures:\n  - id: {id}\n    finding: {finding}\n    pattern: '{pattern}'\n"
             "    priority: 50\n    note: n\n    examples: ['{example}']\n")
REF_BOMB = "\n".join(["id: bomb-refs", "title: t", "severity: info", "category: code", "why: w", "fix: f",
                      "references:", "  - &r0 [x, x, x, x, x, x, x, x, x]"]
                     + [f"  - &r{i} [{', '.join([f'*r{i - 1}'] * 9)}]" for i in range(1, 9)]) + "\n"

HOSTILE = {
    "alias-in-when": ({"checks/bomb.yaml": "id: bomb\nfinding: precision-unsupported\nwhen:\n  any:\n"
                       + "".join(f"    - {line}\n" for line in _bomb(8, "{fact: hw.min_compute_capability, op: equals, value: 1}"))},
                      "checks/bomb.yaml:", "through aliases"),
    "alias-in-references": ({"findings/bomb-refs.yaml": REF_BOMB}, "findings/bomb-refs.yaml:", "through aliases"),
    "template-loop": ({"findings/tpl-loop.yaml": FINDING.format(
                          id="tpl-loop", refs="x",
                          fix='"{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}done"'),
                       "signatures/tpl.yaml": SIGNATURE.format(id="tpl", finding="tpl-loop", pattern="Tpl loop trigger",
                                                               example="Tpl loop trigger")},
                      "findings/tpl-loop.yaml:6", "rendering budget"),
    "catastrophic-regex": ({"signatures/evil.yaml": SIGNATURE.format(id="evil", finding="out-of-memory",
                                                                     pattern="xyz(a+)+$", example="xyzaaaa")},
                           "signatures/evil.yaml:6", "catastrophic backtracking"),
    "huge-number": ({"checks/bignum.yaml": "id: bignum\nfinding: precision-unsupported\n"
                     "when: {fact: hw.min_compute_capability, op: gt, value: " + "9" * 5000 + "}\n"},
                    "checks/bignum.yaml:3", "too large"),
    "misplaced-file": ({"misc/broken.yaml": "id: [unclosed\n"}, "misc/broken.yaml", "not a place rules are read from"),
}
LOG = "RuntimeError: x\nTpl loop trigger\nxyz" + "a" * 40 + "b\n"


def _run(argv: list[str], cwd: Path) -> tuple[int, str, float]:
    start = time.monotonic()
    try:
        out = subprocess.run([sys.executable, "-m", "troubleshooter", *argv], capture_output=True, text=True,
                             timeout=TIMEOUT_S, cwd=cwd)
    except subprocess.TimeoutExpired:
        pytest.fail(f"troubleshoot {' '.join(argv)} still running after {TIMEOUT_S} s")
    return out.returncode, out.stderr, time.monotonic() - start


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("command", ["rules-check", "logs-overlay", "overlay-before-logs"])
def test_hostile_rules_are_refused(case: str, command: str, tmp_path: Path) -> None:
    files, where, why = HOSTILE[case]
    rules = _write(tmp_path / "site-rules", files)
    (tmp_path / "job.log").write_text(LOG, encoding="utf-8")
    argv = {"rules-check": ["rules", "check", "--rules", str(rules)],
            "logs-overlay": ["logs", "job.log", "--rules", str(rules)],
            "overlay-before-logs": ["--rules", str(rules), "logs", "job.log"]}[command]
    code, err, elapsed = _run(argv, tmp_path)
    assert code == 2, err
    assert where in err and why in err, err
    assert elapsed < FAST_S, f"refused only after {elapsed:.1f} s"
