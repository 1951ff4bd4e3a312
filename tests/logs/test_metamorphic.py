"""Metamorphic invariances of the log analyzer (issue 11): a log's verdict does not depend on its framing.

A sample of the DEV split of ``tests/real/logs`` (never the test split) is re-framed by the
transformations of ``tests/logs/metamorphic.py`` that the analyzer is invariant to today, and the
``troubleshoot logs`` verdict (first finding shown, clean or not) must stay as it was. The full
measurement is ``python bench/logs_metamorphic.py``.
"""

from __future__ import annotations

import pytest

from tests.logs.metamorphic import TRANSFORMS, duplicate, relabel, wrap
from tests.real.logquality import LogCase, cases, judge

# the framings the dev corpus is invariant to (bench/logs_metamorphic.py: no verdict moves)
INVARIANT = (
    "torchrun [rankN]:", "torchrun [defaultN]:", "srun --label N: ", "srun label over torchrun",
    "mpirun [1,N]<stderr>:", "deepspeed/pdsh host: ", "timestamp ISO-8601 Z", "timestamp [Y-m-d H:M:S,ms]",
    "timestamp glog", "timestamp on its own line", "CRLF line ends", "indent as tabs", "indent lost",
    "markdown indented block", "ranks interleaved", "shell prompt and command", "markdown code fence",
    "Windows paths", "non-ASCII user name",
)
SAMPLE_EVERY = 16  # every 16th dev log (by name): a fast, fixed sample of every kind of failure


def _sample() -> list[LogCase]:
    return cases("dev")[::SAMPLE_EVERY]


@pytest.fixture(scope="module")
def originals(rules):
    return {case.name: judge(case, rules) for case in _sample()}


def _verdict(rules, case: LogCase, text: str, tmp_path) -> tuple:
    path = tmp_path / f"{case.name}.log"
    path.write_bytes(text.encode("utf-8"))
    after = judge(LogCase(case.name, path, case.expect), rules)
    return after.first, after.clean


@pytest.mark.parametrize("name", INVARIANT)
def test_verdict_invariant_under_framing(rules, originals, name, tmp_path):
    transform = TRANSFORMS[name]
    moved = []
    for case in _sample():
        text = case.log.read_text(encoding="utf-8", errors="replace")
        before = originals[case.name]
        after = _verdict(rules, case, transform(text), tmp_path)
        if after != (before.first, before.clean):
            moved.append(f"{case.name}: {before.first} -> {after[0]}")
    assert not moved, f"{name} moved verdicts: {moved}"


def test_transformations_preserve_the_error_lines():
    """The re-framings keep every character of an error line in order (a harness check): relabelling keeps
    the text after the label, wrapping only inserts newlines, duplication keeps each line."""
    line = "[rank1]:RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3"
    assert relabel(lambda r: f"{r}: ")(line + "\n") == line.replace("[rank1]:", "1: ") + "\n"
    assert wrap(40)(line + "\n").replace("\n", "") == line
    assert duplicate("a\nb\n") == "a\na\nb\nb\n"
