"""rules/live/: the shipped files load; broken ones are reported with file:line."""

from __future__ import annotations

import pytest

from troubleshooter.core.errors import RuleFileError
from troubleshooter.live.discover import launcher_of
from troubleshooter.live.rules import load_live_rules, live_rules_for
from troubleshooter.core.ruleset import load_rules


def test_shipped_live_rules_load():
    live = live_rules_for(load_rules())
    assert {p.finding for p in live.pictures} >= {"uneven-last-batch", "collective-mismatch", "collective-timeout"}
    assert live.rank_env["rank"][0] == "RANK"


@pytest.mark.parametrize("argv,expected", [
    (["/usr/bin/python3", "/venv/bin/torchrun", "--nproc_per_node=2", "t.py"], "torchrun"),
    (["python", "-m", "torch.distributed.run", "t.py"], "torchrun"),
    (["mpirun", "-np", "4", "python", "t.py"], "mpirun"),
    (["srun", "python", "t.py"], "slurm"),
    (["python", "/venv/bin/deepspeed", "t.py"], "deepspeed"),
    (["python", "train.py", "--torchrun-like"], None),
])
def test_launchers_are_recognised(argv, expected):
    assert launcher_of(argv, live_rules_for(load_rules())) == expected


def test_broken_live_rules_name_file_and_line(tmp_path):
    (tmp_path / "live").mkdir()
    (tmp_path / "live" / "pictures.yaml").write_text(
        "pictures:\n  - id: x\n    finding: no-such-finding\n    waiting: [collective]\n    odd: [io]\n"
        "    relation: any\n    detail: d\n  - id: y\n    finding: collective-timeout\n    waiting: [nonsense]\n"
        "    odd: [io]\n    relation: sideways\n    detail: d\n")
    (tmp_path / "live" / "frames.yaml").write_text("activities:\n  - kind: collective\n    label: x\n    file: '(['\n")
    with pytest.raises(RuleFileError) as err:
        load_live_rules([tmp_path], {"collective-timeout"})
    text = err.value.message
    assert "pictures.yaml:3" in text and "unknown finding 'no-such-finding'" in text
    assert "pictures.yaml:12" in text and "unknown relation 'sideways'" in text
    assert "frames.yaml:4" in text and "not a valid regular expression" in text
