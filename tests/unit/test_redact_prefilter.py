"""redact_text's fast path (no secret fragment in the text: returned as is) never skips a secret the full pass masks."""

from __future__ import annotations

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
