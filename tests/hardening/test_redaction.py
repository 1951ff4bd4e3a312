"""The spellings of the issue's reproductions, one by one, through the commands that leaked them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from troubleshooter.cli import main
from troubleshooter.report.redact import MASK, redact_text

HF = "hf_abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.mark.parametrize("line, secret", [
    ("wandb login 0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567"),
    ("curl -H 'Authorization: Bearer abcDEF123456.xyz'", "abcDEF123456.xyz"),
    ("AWS_SECRET_ACCESS_KEY wJalrXUtnFEMIK7MDENGbPxRfiCY", "wJalrXUtnFEMIK7MDENGbPxRfiCY"),
    ("python train.py --password hunter2hunter2", "hunter2hunter2"),
    ("python train.py --db-password=hunter2hunter2", "hunter2hunter2"),
    ('config {"password": "hunter2hunter2", "x": 1}', "hunter2hunter2"),
    ("MY_DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    ("postgres://u:PASSWORDxyz@db:5432/x", "PASSWORDxyz"),
    ("key sk-abcdefghijklmnopqrstuvwxyz012345", "sk-abcdefghijklmnopqrstuvwxyz012345"),
    ("slack xoxb-1234567890-abcdefghijkl", "xoxb-1234567890-abcdefghijkl"),
])
def test_every_spelling_is_masked(line: str, secret: str) -> None:
    out = redact_text(line)
    assert secret not in out and MASK in out


def test_measurements_named_tokens_are_not_masked() -> None:
    assert redact_text("trainstep.tokens_per_s = 1234.5") == "trainstep.tokens_per_s = 1234.5"


def test_masking_rendered_json_keeps_it_valid() -> None:
    doc = {"detail": 'x {"password": "hunter2"} PASSWORD=abc\\ --token "q" Authorization: Bearer zzzzzzzz',
           "trainstep.tokens_per_s": 12}
    out = json.loads(redact_text(json.dumps(doc)))
    assert "hunter2" not in out["detail"] and "zzzzzzzz" not in out["detail"] and out["trainstep.tokens_per_s"] == 12


def test_logs_text_root_cause_line_is_redacted(tmp_path: Path, capsys) -> None:
    log = tmp_path / "x.log"
    log.write_text("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB "
                   f"HF_TOKEN={HF} postgres://u:PASSWORDxyz@db/x MY_DB_PASSWORD=hunter22\n")
    assert main(["logs", str(log)]) == 1
    out = capsys.readouterr().out
    assert "Root cause" in out
    for secret in (HF, "PASSWORDxyz", "hunter22"):
        assert secret not in out


def test_recovery_file_is_redacted(tmp_path: Path) -> None:
    from troubleshooter.tui import recovery

    path = recovery.save({"answers": {"q": f"export HF_TOKEN={HF}"}, "env": {"MY_SECRET": "plain"}},
                         tmp_path / "recovery.json")
    text = path.read_text()
    assert HF not in text and "plain" not in text
