"""DeepSpeed's hostfile in a multi-node launch, and where it ranks against the run's own failure.

Without a hostfile the DeepSpeed launcher runs on the local node only: a notice on one node, a cause
when the launch named a hostfile that is not there. That never stops the run by itself, so a crash the
log shows afterwards comes first and the wrong hostfile after it; only a launcher exit code or other
echo ranks below it. Asked for more than one node with no hostfile at all, DeepSpeed refuses to start
("Num nodes is >1 but no extra nodes available via hostfile"), its own wording of the same cause."""

from __future__ import annotations

from tests.logs.helpers import root_and_shown

LAUNCH = "$ deepspeed --hostfile=/job/hostfile --master_addr 10.0.0.1 train.py --deepspeed ds.json\n"
NOTICE = ("[2024-05-01 10:00:00,000] [WARNING] [runner.py:202:fetch_hostfile] Unable to find hostfile, "
          "will proceed with training with local resources only.\n")
EXIT = ("[2024-05-01 10:00:09,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', "
        "'train.py', '--local_rank=1'] exits with return code = 1\n")


def test_a_crash_after_the_missing_hostfile_comes_first(rules):
    crash = """Traceback (most recent call last):
  File "train.py", line 88, in <module>
    loss.backward()
torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity; 21.50 GiB already allocated)
"""
    root, shown = root_and_shown(rules, LAUNCH + NOTICE + crash + EXIT)
    assert root == "out-of-memory"
    assert "hostfile-missing" in shown


def test_the_missing_hostfile_outranks_a_bare_launcher_exit(rules):
    root, shown = root_and_shown(rules, LAUNCH + NOTICE + EXIT)
    assert (root, shown[:1]) == ("hostfile-missing", ["hostfile-missing"])


def test_more_nodes_than_the_hostfile_gives_is_a_missing_hostfile(rules):
    text = """[2024-05-01 10:00:00,000] [WARNING] [runner.py:202:fetch_hostfile] Unable to find hostfile, will proceed with training with local resources only.
Traceback (most recent call last):
  File "/usr/local/bin/deepspeed", line 6, in <module>
    main()
  File "/usr/local/lib/python3.10/dist-packages/deepspeed/launcher/runner.py", line 459, in main
    raise ValueError("Num nodes is >1 but no extra nodes available via hostfile")
ValueError: Num nodes is >1 but no extra nodes available via hostfile
"""
    root, shown = root_and_shown(rules, text)
    assert (root, shown[:1]) == ("hostfile-missing", ["hostfile-missing"])
