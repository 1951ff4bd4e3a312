"""SLURM's own client tools missing where the job runs.

mmcv/mmengine's SLURM set-up, ignite's idist and other helpers derive MASTER_ADDR from
"scontrol show hostname $SLURM_NODELIST"; in a container started by pyxis/enroot or Singularity scontrol
is usually absent, the address comes back as garbage and init_process_group fails to resolve it
(open-mmlab/mmcv#700, pytorch/ignite#2051, open-mmlab/mmengine#1527). The missing tool is the cause, the
unresolvable address its echo, whichever order the streams interleave them in; the shell and Python word
the missing program differently."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

RENDEZVOUS = """  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/distributed_c10d.py", line 423, in init_process_group
    store = TCPStore(master_addr, master_port, world_size, start_daemon, timeout)
ValueError: host not found: Temporary failure in name resolution
"""

MISSING_SCONTROL = [
    # dash's wording after the traceback (stderr of the subprocess interleaved late)
    RENDEZVOUS + "/bin/dash: 1: scontrol: not found\n",
    # bash's wording before it
    "/bin/sh: scontrol: command not found\n" + RENDEZVOUS,
    # Python's, when the helper runs scontrol with subprocess and no shell
    """Traceback (most recent call last):
  File "/workspace/train.py", line 186, in main
    addr = subprocess.check_output(["scontrol", "show", "hostnames", node_list]).decode().split()[0]
  File "/usr/lib/python3.10/subprocess.py", line 1863, in _execute_child
    raise child_exception_type(errno_num, err_msg, err_filename)
FileNotFoundError: [Errno 2] No such file or directory: 'scontrol'
""",
]


@pytest.mark.parametrize("text", MISSING_SCONTROL)
def test_a_missing_scontrol_is_the_cause_of_the_address_it_could_not_give(rules, text):
    root, shown = root_and_shown(rules, text)
    assert (root, shown[:1]) == ("tool-missing", ["tool-missing"])


def test_a_missing_data_file_is_not_a_missing_tool(rules):
    text = "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'\n"
    root, _shown = root_and_shown(rules, text)
    assert root != "tool-missing"
