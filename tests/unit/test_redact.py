"""Secrets never reach a report: names that hold secrets and values that look like keys."""

from __future__ import annotations

import pytest

from troubleshooter.report.redact import MASK, is_secret_name, redact, redact_text


@pytest.mark.parametrize("name", ["HF_TOKEN", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
                                  "DB_PASSWORD", "GITHUB_TOKEN", "OPENAI_API_KEY", "MY_SECRET", "SSH_KEY"])
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["PATH", "MASTER_PORT", "NCCL_SOCKET_IFNAME", "KEYBOARD", "monkey", "HOME",
                                  "trainstep.tokens_per_s", "net.master_port"])
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


def test_fact_key_naming_a_variable_is_masked() -> None:
    assert redact({"env.HF_TOKEN": "abc", "trainstep.tokens_per_s": 12.5}) == {"env.HF_TOKEN": MASK,
                                                                              "trainstep.tokens_per_s": 12.5}


def test_env_mapping_values_masked_but_names_kept() -> None:
    doc = {"facts": {"env": {"HF_TOKEN": "hf_x", "PATH": "/bin", "MASTER_PORT": "29500"}}}
    assert redact(doc) == {"facts": {"env": {"HF_TOKEN": MASK, "PATH": "/bin", "MASTER_PORT": "29500"}}}


@pytest.mark.parametrize("line, secret", [
    ("export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789", "hf_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("wandb: WANDB_API_KEY='0123456789abcdef0123456789abcdef01234567'", "0123456789abcdef0123456789abcdef01234567"),
    ("token ghp_0123456789abcdefghijABCDEFGHIJ012345 leaked", "ghp_0123456789abcdefghijABCDEFGHIJ012345"),
    ("aws AKIAIOSFODNN7EXAMPLE key", "AKIAIOSFODNN7EXAMPLE"),
    ("db_password: hunter2", "hunter2"),
    ("postgres://admin:s3cr3t@db:5432/x", "s3cr3t"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "eyJhbGciOiJIUzI1NiJ9"),
])
def test_log_lines(line: str, secret: str) -> None:
    out = redact_text(line)
    assert secret not in out and MASK in out


def test_nested_lists_and_innocent_text_untouched() -> None:
    doc = {"findings": [{"evidence": [{"detail": "NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>"}]}]}
    assert redact(doc) == doc
