"""One knowledge loader: every section of ``rules/`` and of each ``--rules DIR`` overlay is read (and
validated) by ``load_rules``, and every consumer reads the one loaded RuleSet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from troubleshooter.core.errors import RuleFileError
from troubleshooter.core.ruleset import load_rules

SCRIPT = """import torch
from mylib import SiteDataParallel


def main():
    net = torch.nn.Linear(4, 4).cuda()
    net = SiteDataParallel(net)
    for step in range(10):
        net(torch.randn(2, 4).cuda()).sum().backward()
"""


def _overlay(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_auto_scans_with_the_overlay_patterns(tmp_path: Path) -> None:
    """``--auto --script`` reads scan patterns from --rules overlays (it used the shipped ones only)."""
    from troubleshooter.run.plan import static_facts

    script = tmp_path / "train.py"
    script.write_text(SCRIPT, encoding="utf-8")
    site = _overlay(tmp_path / "site", {"scan/site.yaml": "dataparallel: [mylib.SiteDataParallel]\n"})
    assert not static_facts([str(script)], [], load_rules())["scan"]["scan.dataparallel"]
    assert static_facts([str(script)], [], load_rules([site]))["scan"]["scan.dataparallel"]


def test_scan_pattern_errors_are_rule_errors(tmp_path: Path) -> None:
    site = _overlay(tmp_path, {"scan/site.yaml": "dataparalel: [x]\nglobal_batch_names: ['(a+)+$']\n"})
    with pytest.raises(RuleFileError) as exc:
        load_rules([site])
    text = exc.value.message
    assert "site.yaml:1" in text and "unknown scanner pattern list 'dataparalel'" in text
    assert "site.yaml:2" in text and "catastrophic backtracking" in text


def test_scan_number_keys_are_whole_numbers_an_overlay_replaces(tmp_path: Path) -> None:
    """``large_per_rank_batch`` (rules/scan/patterns.yaml) is one number: an overlay's value replaces the shipped
    one, and anything but a whole number above 0 is a rule error naming its line."""
    from troubleshooter.scan.patterns import patterns_for

    assert patterns_for(load_rules()).large_per_rank_batch == 32
    site = _overlay(tmp_path / "site", {"scan/site.yaml": "large_per_rank_batch: 256\n"})
    assert patterns_for(load_rules([site])).large_per_rank_batch == 256
    bad = _overlay(tmp_path / "bad", {"scan/site.yaml": "dataparallel: [x]\nlarge_per_rank_batch: [32]\n"})
    with pytest.raises(RuleFileError) as exc:
        load_rules([bad])
    assert "site.yaml:2" in exc.value.message and "large_per_rank_batch should be a whole number" in exc.value.message


def test_expectations_overlay_comes_first_and_reaches_the_probes(tmp_path: Path) -> None:
    from probes.collective import expected_busbw, load_expectations

    site = _overlay(tmp_path, {"expectations.yaml": "links:\n  - {id: site-loopback, backend: gloo, transport: loopback, "
                                                     "slow_below_gbps: 0.5}\nparity:\n  may_differ: ['*site_counter']\n"})
    assert expected_busbw(load_expectations({"rules": []}), "gloo", "loopback") is None
    assert expected_busbw(load_expectations({"rules": [str(site)]}), "gloo", "loopback") == 0.5
    rules = load_rules([site])
    assert rules.expectations["links"][0]["id"] == "site-loopback"
    assert "nccl-intranode-floor" in [row["id"] for row in rules.expectations["links"]]
    assert "*site_counter" in rules.expectations["parity"]["may_differ"]
    assert "*num_batches_tracked" in rules.expectations["parity"]["may_differ"]


def test_expectations_are_validated(tmp_path: Path) -> None:
    site = _overlay(tmp_path, {"expectations.yaml": "links:\n  - {id: x, backend: nccl, transport: nvlink, slow_below: 3}\n"})
    with pytest.raises(RuleFileError, match="unknown key 'slow_below'"):
        load_rules([site])


def test_run_options_hand_the_overlays_to_the_probes() -> None:
    from troubleshooter.run.options import RunOptions

    assert RunOptions(rules_dirs=("site",)).probe_options()["rules"] == ["site"]


def test_live_rules_come_from_the_ruleset(tmp_path: Path) -> None:
    from troubleshooter.live.rules import live_rules_for

    site = _overlay(tmp_path, {"live/frames.yaml": "activities:\n  - {kind: io, label: site storage, function: '^site_read$'}\n"})
    rules = load_rules([site])
    assert live_rules_for(rules) is rules.live
    assert rules.live.activities[0].label == "site storage"  # overlay entries are tried first


def test_rules_facts_honours_overlays(tmp_path: Path) -> None:
    site = _overlay(tmp_path, {"misplaced.yaml": "x: 1\n"})
    out = subprocess.run([sys.executable, "-m", "troubleshooter", "rules", "facts", "--rules", str(site)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "misplaced.yaml is not a place rules are read from" in out.stderr


@pytest.mark.parametrize("argv", [["--rules", "{site}", "logs", "{log}"], ["logs", "{log}", "--rules", "{site}"],
                                  ["--rules", "{site}", "rules", "list"]])
def test_rules_option_before_or_after_the_sub_command(argv: list[str], tmp_path: Path) -> None:
    site = _overlay(tmp_path / "site", {"findings/site-only.yaml": "id: site-only\ntitle: Site only\nseverity: error\n"
                                        "category: code\nwhy: w\nfix: f\nreferences: [x]\n",
                                        "signatures/site.yaml": "group: site\ndoc: d\nsignatures:\n  - id: site-only\n"
                                        "    finding: site-only\n    pattern: 'SITE FAILURE 42'\n    priority: 90\n"
                                        "    note: n\n    examples: ['SITE FAILURE 42']\n"})
    log = tmp_path / "job.log"
    log.write_text("step 1\nSITE FAILURE 42\n", encoding="utf-8")
    args = [a.format(site=site, log=log) for a in argv]
    out = subprocess.run([sys.executable, "-m", "troubleshooter", *args], capture_output=True, text=True, timeout=60)
    assert "site-only" in out.stdout or "Site only" in out.stdout, out.stdout + out.stderr
