"""The framings made invariant in session 10 hold on the dev logs they moved before (``bench/logs_metamorphic.py
--show``): an unknown tool's prefix, output duplicated line by line, a 100-column terminal's cuts."""

from __future__ import annotations

import pytest

from tests.logs.metamorphic import TRANSFORMS
from tests.real.logquality import LogCase, cases, judge

MOVED = {
    "an unknown tool's prefix": ("Lightning-AI-pytorch-lightning-6461", "deepspeedai-DeepSpeed-461",
                                 "zai-org-ChatGLM2-6B-262", "agentic-learning-ai-lab-midway-network-1"),
    "output duplicated by 2 ranks": ("pytorch-pytorch-14628", "pytorch-torchtitan-1618"),
    "wrapped at 100 columns": ("modelscope-ms-swift-9443", "agentic-learning-ai-lab-midway-network-1"),
}
NAMES = sorted({name for names in MOVED.values() for name in names})


@pytest.fixture(scope="module")
def dev():
    return {case.name: case for case in cases("dev") if case.name in NAMES}


def test_the_logs_are_dev_logs(dev):
    assert sorted(dev) == NAMES


@pytest.mark.parametrize("framing, name", [(framing, name) for framing, names in MOVED.items() for name in names])
def test_verdict_holds_under_framing(rules, dev, framing, name, tmp_path):
    case = dev[name]
    before = judge(case, rules)
    path = tmp_path / f"{name}.log"
    path.write_bytes(TRANSFORMS[framing](case.log.read_text(encoding="utf-8", errors="replace")).encode("utf-8"))
    after = judge(LogCase(name, path, case.expect), rules)
    assert (after.first, after.clean) == (before.first, before.clean)
