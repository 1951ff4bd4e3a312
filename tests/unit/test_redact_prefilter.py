"""redact_text's fast path (no secret fragment in the text: returned as is) never skips a secret the full pass masks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from troubleshooter.report.redact import _mask_all, redact_text

FRAGMENTS = ["hf_", "ghp_", "github_pat_", "sk-", "AKIA", "ASIA", "xoxb-", "glpat-", "eyJ", "://", "@", ":", "=", " ",
             "Authorization", "Bearer ", "wandb login ", "TOKEN", "token", "SECRET", "PASSWORD", "passwd", "API_KEY",
             "api-key", "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIALS", "AUTH_KEY", "--password", "\"", "'", "_", "-", "."]
TEXT = st.lists(st.sampled_from(FRAGMENTS) | st.text(alphabet="abcdefABCDEF0123456789xyzXYZ", min_size=1, max_size=40),
                max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_fast_path_agrees_with_the_full_pass(text: str) -> None:
    assert redact_text(text) == (_mask_all(text) if text else text)


def test_known_shapes_still_masked() -> None:
    assert "abcdefghijklmnopqrstuvwxyz0123" not in redact_text("hf_abcdefghijklmnopqrstuvwxyz0123456789")
    assert redact_text("rank 0: 26.5 ms on node00") == "rank 0: 26.5 ms on node00"


def _spellings(alternative: str, separators: tuple[str, ...]) -> list[str]:
    """The concrete words one alternative of a word regex stands for (`_?` and a final `S?` expanded)."""
    words = [alternative.replace("(?!S)", "")]
    for optional, choices in (("[-_]?", ("", *separators)), ("_?", ("", *separators)), ("S?", ("", "S"))):
        words = [w.replace(optional, c, 1) for w in words for c in choices] if any(optional in w for w in words) \
            else words
    return words


def _secret_words() -> list[tuple[str, str]]:
    """Every (env spelling, flag spelling) of every secret word the name patterns know."""
    from troubleshooter.report.redact import _FLAG_WORDS, _WORDS

    env = [w for alt in _WORDS.split("|") for w in _spellings(alt, ("_",))]
    flag = [w for alt in _FLAG_WORDS.split("|") for w in _spellings(alt, ("-", "_"))]
    assert len(env) >= 10 and len(flag) > len(env)
    return [(w, w) for w in env] + [(w.replace("-", "_"), w) for w in flag]


@pytest.mark.parametrize("env, flag", _secret_words())
def test_every_secret_word_passes_the_prefilter_in_every_spelling(env: str, flag: str) -> None:
    """A word added to the patterns' list reaches the prefilter too: each spelling a pattern masks is masked."""
    value = "s3cr3tVALUE9"
    texts = [f"{env}={value}", f"MY_{env}: {value}", f"export HF_{env.upper()} {value}", f"--{flag.lower()} {value}",
             f"--my-{flag.lower()}={value}", f'{{"{env.lower()}": "{value}"}}', f"{env.title()}={value}"]
    for text in texts:
        masked = redact_text(text)
        assert value not in masked, text
        assert masked == _mask_all(text), text


@pytest.mark.parametrize("text", [
    "hf_" + "a" * 34, "ghp_" + "b" * 36, "github_pat_" + "c" * 45, "sk-" + "d" * 24, "AKIA" + "E" * 16,
    "xoxb-" + "1" * 12, "glpat-" + "f" * 22, "eyJ" + "a" * 12 + ".eyJ" + "b" * 12 + "." + "c" * 12,
    "postgres://user:hunter2@db:5432/x", "Authorization: Bearer abcdef123456", "wandb login " + "0" * 40])
def test_every_value_shape_passes_the_prefilter(text: str) -> None:
    assert redact_text(text) == _mask_all(text) != text
