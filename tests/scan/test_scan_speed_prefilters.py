"""Speed-only pre-filters of collective-mismatch (scan-speed8b) change no finding: a module is walked for a read of
a broadcasting attribute (``collective_attributes``) only when its text spells the pieces every match holds (as
Python normalises identifiers: a fullwidth ``ｌog_dir`` is ``log_dir``), and a function for a clock test only when a
clock call lies within its lines (decorators included)."""

from __future__ import annotations

import re

import pytest

from tests.scan.conftest import scan_ids
from tests.scan.test_spellings7_collective_mismatch import ID, LOG_DIR, hook
from troubleshooter.scan.checkers.collective_mismatch import _required_literal

SPELLINGS = {
    "ascii": "self.trainer.log_dir",
    "fullwidth-attribute": "self.trainer.\uff4cog_dir",
    "fullwidth-owner": "self.\uff54rainer.log_dir",
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_broadcasting_read_found_however_spelled(tmp_path, name):
    read = f'''
@rank_zero_only
def on_fit_start(self):
    os.makedirs(os.path.join({SPELLINGS[name]}, "samples"), exist_ok=True)
'''
    assert ID in scan_ids(tmp_path, LOG_DIR.format(hook=hook(read)))


CLOCK = '''
import time

import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def timed(fn):
    return fn


class Saver:
    def __init__(self, interval):
        self.interval, self.last = interval, time.time()

    @timed
    def maybe_save(self, model, step):
        {body}


def main():
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(4, 1).cuda())
    saver = Saver(60)
    for step in range(100):
        saver.maybe_save(model, step)


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("body, found", [
    ("if time.time() - self.last > self.interval:\n            dist.barrier()", True),
    ("if step % 10 == 0:\n            dist.barrier()", False),
])
def test_clock_test_in_a_decorated_method(tmp_path, body, found):
    assert (ID in scan_ids(tmp_path, CLOCK.format(body=body))) is found


@pytest.mark.parametrize("pattern, literal", [
    (r"^\w*trainer\.log_dir$", "trainer.log_dir"),
    (r"x[ab]yz\.q", "yz.q"),
    (r"log_dir|save_dir", ""),
    (r"(?i)trainer\.log_dir", ""),
])
def test_required_literal(pattern, literal):
    assert _required_literal(re.compile(pattern)) == literal
