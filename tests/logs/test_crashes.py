"""Crashes as launchers report them: the failed rank's own first error, device-index failures by evidence."""

from __future__ import annotations

from tests.logs.test_generalization import _facts

_SUMMARY = """
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2023-01-01_10:00:00
  host      : node0
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 2345)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""


def test_an_error_before_the_process_group_shows_its_exception_not_the_placeholder(rules):
    facts = _facts(rules, """
Traceback (most recent call last):
  File "/w/train.py", line 40, in <module>
    main(args)
  File "/w/data.py", line 7, in build_dataset
    with open(path) as f:
FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'
ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 2345) of binary: /usr/bin/python3
Traceback (most recent call last):
  File "/usr/local/bin/torchrun", line 8, in <module>
    sys.exit(main())
""" + _SUMMARY)
    crash = facts["log.rank-crashed"][0]
    assert crash["vars"]["exception"].startswith("FileNotFoundError")
    assert crash["vars"]["location"] == "/w/data.py:7"
    assert "To enable traceback" not in crash["detail"]


def test_a_summary_alone_is_still_a_failure(rules):
    facts = _facts(rules, _SUMMARY)
    assert facts["log.failed_ranks"] == [0]
    assert "log.rank-crashed" in facts or "log.unrecognized-failure" in facts


def test_a_bare_invalid_ordinal_is_more_ranks_than_gpus(rules):
    facts = _facts(rules, "RuntimeError: CUDA error: invalid device ordinal\n")
    assert facts["log.root_cause"]["id"] == "local-rank-exceeds-devices"


def test_an_invalid_ordinal_after_a_fixed_index_is_that_index(rules):
    facts = _facts(rules, """
Traceback (most recent call last):
  File "eval.py", line 40, in <module>
    model = model.to("cuda:5")
RuntimeError: CUDA error: invalid device ordinal
""")
    assert facts["log.root_cause"]["id"] == "cuda-invalid-device"
