"""Two start-up mistakes of init_process_group, each in every wording public logs show.

A script run without its launcher finds no RANK / MASTER_ADDR for the env:// rendezvous. The message
names the variable, but pasted tracebacks often stop at the raise line: torch 1.x names the variable
there (``raise _env_error("MASTER_ADDR")``), later versions raise from ``_get_env_or_raise`` whose
caller frame names it. Other projects' ``_env_error`` helpers take other arguments and mean nothing.

A second init_process_group in a process that already has its default group (a framework initialised
it first, a setup function run again per fold) is its own diagnosis: a RuntimeError up to torch 2.0, a
ValueError since, with the raise line splitting the message in torch 1.x. It is not the opposite
mistake, a distributed call without any process group."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

SITE = "/home/user/env/lib/python3.8/site-packages/torch/distributed"

ENV_NOT_SET = [
    # torch 1.x traceback cut at the raise line (hzwer/ECCV2022-RIFE#52)
    f"""Traceback (most recent call last):
  File "train.py", line 11, in <module>
    torch.distributed.init_process_group(backend="nccl", world_size=4)
  File "{SITE}/distributed_c10d.py", line 423, in init_process_group
    store, rank, world_size = next(rendezvous_iterator)
  File "{SITE}/rendezvous.py", line 166, in _env_rendezvous_handler
    raise _env_error("MASTER_ADDR")
""",
    # torch 2.x traceback cut at the raise line, under torchrun's rank prefix
    f"""[rank0]:   File "{SITE}/rendezvous.py", line 236, in _env_rendezvous_handler
[rank0]:     master_addr = _get_env_or_raise("MASTER_ADDR")
[rank0]:   File "{SITE}/rendezvous.py", line 219, in _get_env_or_raise
[rank0]:     raise _env_error(env_var)
""",
    # the full message, each variable the handler reads (pytorch/pytorch#39832, NVIDIA/apex#99)
    "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable MASTER_PORT"
    " expected, but not set",
    "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable WORLD_SIZE"
    " expected, but not set",
    f"""  File "{SITE}/rendezvous.py", line 219, in _get_env_or_raise
    raise _env_error(env_var)
ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set
""",
]


@pytest.mark.parametrize("text", ENV_NOT_SET)
def test_the_env_rendezvous_without_its_variables_is_a_missing_launcher(rules, text):
    root, shown = root_and_shown(rules, text)
    assert (root, shown[:1]) == ("launcher-env-missing", ["launcher-env-missing"])


def test_another_projects_env_error_helper_is_not_the_rendezvous(rules):
    text = """  File "/app/settings.py", line 40, in _env_choice
    raise _env_error(name, f"must be one of {sorted(choices)}, got {value!r}")
"""
    root, _shown = root_and_shown(rules, text)
    assert root != "launcher-env-missing"


INIT_TWICE = [
    # torch 1.x, mmcv's init_dist after the process group already existed
    f"""Traceback (most recent call last):
  File "tools/train.py", line 123, in main
    init_dist(args.launcher, **cfg.dist_params)
  File "{SITE}/distributed_c10d.py", line 388, in init_process_group
    raise RuntimeError("trying to initialize the default process group "
RuntimeError: trying to initialize the default process group twice!
""",
    # the same traceback cut at the raise line
    f"""  File "{SITE}/distributed_c10d.py", line 370, in init_process_group
    raise RuntimeError("trying to initialize the default process group "
""",
    # torch 2.x
    f"""  File "{SITE}/distributed_c10d.py", line 1638, in init_process_group
    raise ValueError("trying to initialize the default process group twice!")
ValueError: trying to initialize the default process group twice!
""",
    '"trying to initialize the default process group " "twice!"',
]


@pytest.mark.parametrize("text", INIT_TWICE)
def test_a_second_init_process_group_is_initialized_twice(rules, text):
    root, shown = root_and_shown(rules, text)
    assert (root, shown[:1]) == ("process-group-initialized-twice", ["process-group-initialized-twice"])


def test_a_call_without_any_process_group_stays_not_initialized(rules):
    text = "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group."
    root, _shown = root_and_shown(rules, text)
    assert root == "process-group-not-initialized"
