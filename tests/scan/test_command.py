"""``troubleshoot scan``: text, JSON and SARIF output, exit codes, syntax errors, directory walking."""

from __future__ import annotations

import json
from pathlib import Path

from troubleshooter.cli import main

CORPUS = Path(__file__).parent / "corpus"
BUGGY = str(CORPUS / "b01_plain_no_sampler.py")
CLEAN = str(CORPUS / "c01_torchrun_correct.py")


def test_text_output_is_grouped_by_file_with_lines(capsys):
    assert main(["scan", BUGGY, CLEAN]) == 1
    out = capsys.readouterr().out
    assert f"{BUGGY}:16: error missing-distributed-sampler: loader has no DistributedSampler" in out
    assert out.splitlines()[0] == BUGGY
    assert "Found 1 issue(s)" in out


def test_clean_script_exits_zero(capsys):
    assert main(["scan", CLEAN]) == 0
    assert "No issues found in 1 file(s)" in capsys.readouterr().out


def test_json_is_the_report_document(tmp_path):
    out = tmp_path / "r.json"
    assert main(["scan", BUGGY, "--format", "json", "-o", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert doc["schema"] == "ddp-troubleshooter/report@1" and doc["mode"] == "scan"
    finding = doc["findings"][0]
    assert finding["id"] == "missing-distributed-sampler"
    assert finding["location"] == {"path": BUGGY, "line": 16}
    assert "loader" in finding["fix"] and "dataset" in finding["fix"]
    assert doc["facts"]["scan.files"] == 1 and doc["facts"]["scan.uses_distributed"] is True


def test_sarif_is_valid_2_1_0(tmp_path, capsys):
    assert main(["scan", BUGGY, str(CORPUS / "b29_several_bugs.py"), "--format", "sarif"]) == 1
    log = json.loads(capsys.readouterr().out)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    # b01 destroys its process group, which satisfies destroy-process-group-missing for the whole scan
    assert sorted(ids) == ["hardcoded-cuda0", "logging-from-all-ranks", "missing-distributed-sampler"]
    assert all(r["shortDescription"]["text"] and r["helpUri"].startswith("http") for r in rules)
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note") and result["message"]["text"]
        loc = result["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"].endswith(".py") and loc["region"]["startLine"] >= 1


def test_syntax_error_is_reported_and_scan_goes_on(tmp_path, capsys):
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    good = tmp_path / "train.py"
    good.write_text(Path(BUGGY).read_text())
    assert main(["scan", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"{tmp_path / 'broken.py'}:1: error syntax-error: cannot parse" in out
    assert "missing-distributed-sampler" in out and "1 file(s) could not be parsed" in out


def test_directory_walk_skips_ignored_dirs(tmp_path, capsys):
    for skipped in (".git", "venv", "build", "__pycache__", "node_modules", "site-packages"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "train.py").write_text(Path(BUGGY).read_text())
    (tmp_path / "myenv").mkdir()
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "myenv" / "x.py").write_text(Path(BUGGY).read_text())
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ok.py").write_text(Path(CLEAN).read_text())
    assert main(["scan", str(tmp_path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["facts"]["scan.files"] == 1


def test_unreadable_path_exits_two(capsys):
    assert main(["scan", "/nonexistent/train.py", CLEAN]) == 2
    captured = capsys.readouterr()
    assert "/nonexistent/train.py: no such file or directory" in captured.out + captured.err


def test_hits_carry_fix_vars_from_the_script(tmp_path):
    from troubleshooter.scan import scan_paths
    hits = scan_paths([str(CORPUS / "b27_class_trainer_no_set_epoch.py")]).hits["missing-set-epoch"]
    assert hits[0]["vars"] == {"sampler": "self.sampler", "loader": "self.loader", "variable": "epoch"}


def test_fact_specs_declare_every_fact_scan_paths_emits():
    from troubleshooter.scan import fact_specs, scan_paths
    specs = {s.key: s for s in fact_specs(None)}
    facts = scan_paths([str(CORPUS)]).facts
    assert set(facts) <= set(specs)
    assert all(specs[k].accepts(v) for k, v in facts.items())
    assert facts["scan.dataloader_workers"] == 8


def test_report_formats_follow_the_output_extension(tmp_path):
    """-o r.html / r.md write the templated report, not terminal text under an .html name."""
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    assert main(["scan", BUGGY, "-o", str(html)]) == 1
    assert main(["scan", BUGGY, "--format", "md", "-o", str(md)]) == 1
    assert html.read_text().startswith("<!DOCTYPE html>") and "missing-distributed-sampler" in html.read_text()
    assert md.read_text().startswith("# DDP diagnosis (scan)") and "`missing-distributed-sampler`" in md.read_text()


MIXED = '''
import os
import torch
import torch.distributed as dist
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(torch.nn.Linear(2, 2).cuda(local_rank), device_ids=[local_rank])
    sampler = DistributedSampler(range(10))
    loader = DataLoader(range(10), batch_size=2, sampler=sampler)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    wandb.init(project="x")
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x in loader:
            loss = model(x.float().cuda(local_rank)).sum()
            loss.backward()
            opt.step()
            print("loss", loss.item())
    dist.destroy_process_group()
'''


def test_each_hit_shows_its_own_severity_when_a_finding_mixes_them(tmp_path, capsys):
    """A tracker on every rank is a warning, a print in the loop only a note: one finding, two severities."""
    script = tmp_path / "train.py"
    script.write_text(MIXED)
    assert main(["scan", str(script)]) == 1
    out = capsys.readouterr().out
    assert f"{script}:18: warning logging-from-all-ranks: wandb.init()" in out
    assert f"{script}:25: info logging-from-all-ranks: print()" in out
    assert main(["scan", str(script), "--format", "json", "-o", str(tmp_path / "r.json")]) == 1
    finding = json.loads((tmp_path / "r.json").read_text())["findings"][0]
    assert finding["severity"] == "warning"
    assert [ev.get("severity") for ev in finding["evidence"]] == [None, "info"]
