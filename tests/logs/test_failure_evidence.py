"""A failing run is never clean: the generic failure detector (``failure`` signatures of
``rules/signatures/failures.yaml``, exception lines after a traceback's frames) when no diagnosis matches."""

from __future__ import annotations

import pytest

from tests.logs.helpers import analyse, analyse_lines, shown

PROGRESS = "".join(f"epoch 1 step {i} loss 2.{i:02d}\n" for i in range(1, 30))

FAMILIES = {
    "open mpi": "Primary job  terminated normally, but 1 process returned\n"
                "a non-zero exit code. Per user-direction, the job has been aborted.\n",
    "mpich": "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 1234 RUNNING AT node1\n",
    "jvm": 'Exception in thread "main" java.lang.IllegalStateException: Cannot call methods on a stopped SparkContext.\n'
           "\tat org.apache.spark.SparkContext.assertNotStopped(SparkContext.scala:100)\n",
    "rust panic": "thread '<unnamed>' panicked at 'called `Result::unwrap()` on an `Err` value: RecvError', "
                  "src/libstd/sync/mpsc/mod.rs:2741:22\n",
    "docker compose": "trainer-1  | epoch 1 step 3\ntrainer-1 exited with code 1\n",
    "kubernetes": "  Warning  BackOff    33s (x70 over 15m)  kubelet, minikube  Back-off restarting failed container\n",
    "make": "make: *** [Makefile:12: train] Error 1\n",
    "subprocess wording": "ERROR: Command '['/usr/bin/python3', 'train.py']' returned non-zero exit status 1.\n",
    "slurm cancel": "slurmstepd: error: *** STEP 123456.0 ON node01 CANCELLED AT 2023-05-01T10:00:00 ***\n",
    "logger error at the end": "2023-06-01 10:00:00,123 - ERROR - Training failed: dataset shard 3 is empty\n",
    "loguru error at the end": "2023-06-01 10:00:00.123 | ERROR    | train:main:42 - loss is nan\n",
    "hydra missing config": "In 'config': Could not find 'dataset/imagenet_subset'\n",
    "hydra abridged report": "Error merging 'config.yaml' with schema\nKey 'augs' not in 'Config'\n    full_key: augs\n\n"
                             "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n",
    "windows terminal": "[process exited with code 1 (0x00000001)]\n",
    "localized ide exit": "进程已结束，退出代码为 1\n",
    "argparse refusal": "usage: train.py [-h] [--epochs EPOCHS]\ntrain.py: error: unrecognized arguments: --nproc-per-node=1\n",
    "argparse missing argument": "usage: main.py [-h] --data-path DATA_PATH\n"
                                 "main.py: error: the following arguments are required: --data-path\n",
}


@pytest.mark.parametrize("whole", [True, False], ids=["file", "stream"])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_failure_in_any_tools_wording_is_reported(rules, family, whole):
    facts = analyse(rules, PROGRESS + FAMILIES[family], whole=whole)
    assert shown(rules, facts) == ["unrecognized-failure"], family
    hit = facts["log.unrecognized-failure"][0]
    assert hit["line"] > 29 and hit["vars"]["exception"]


def test_an_error_record_the_run_went_on_after_is_not_a_failure(rules):
    facts = analyse(rules, "2023-06-01 10:00:00,123 - ERROR - could not reach the metrics server\n" + PROGRESS)
    assert shown(rules, facts) == []


def test_nccl_warnings_at_the_end_are_not_failures(rules):
    facts = analyse(rules, PROGRESS + "host1:14926:14926 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n")
    assert shown(rules, facts) == []


def test_a_level_on_every_line_is_a_collectors_not_a_failure(rules):
    text = "".join(f"2024-03-05 12:00:{i:02d}.000 | ERROR    | __main__:main:42 - step {i} loss 2.{i:02d}\n" for i in range(30))
    assert shown(rules, analyse(rules, text)) == []


def test_a_python_exception_wins_over_a_failure_line(rules):
    facts = analyse(rules, PROGRESS + """Traceback (most recent call last):
  File "/w/train.py", line 40, in <module>
    main()
  File "/w/data.py", line 7, in load
    raise LookupError("no shard 3")
LookupError: no shard 3
trainer-1 exited with code 1
""")
    root = facts["log.root_cause"]
    assert root["traceback"].startswith("LookupError") and root["where"] == "/w/data.py:7"


@pytest.mark.parametrize("whole", [True, False], ids=["file", "stream"])
@pytest.mark.parametrize("exception", ["socket.timeout: timed out", "queue.Empty", "Exception: bad config",
                                       "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
                                       "ray.exceptions.RayTaskError(ValueError): ray::Trainer.train()"])
def test_any_exception_class_ends_a_traceback(rules, exception, whole):
    facts = analyse(rules, PROGRESS + f"""Traceback (most recent call last):
  File "/w/train.py", line 40, in <module>
    main()
  File "/w/loop.py", line 7, in step
    batch = next(it)
{exception}
""", whole=whole)
    hit = facts["log.unrecognized-failure"][0]
    assert hit["vars"]["exception"] == exception and hit["vars"]["location"] == "/w/loop.py:7"


def test_a_source_line_after_a_frame_is_not_an_exception(rules):
    facts = analyse_lines(rules, """Traceback (most recent call last):
File "/w/train.py", line 40, in <module>
main(args)
File "/w/loop.py", line 7, in step
train_one_epoch(model)
ValueError: bad shape
""")
    assert facts["log.root_cause"]["traceback"] == "ValueError: bad shape"


@pytest.mark.parametrize("whole", [True, False], ids=["file", "stream"])
@pytest.mark.parametrize("bar", [
    "Epoch 0:   3%|▎         | 30/1000 [00:05<02:41,  6.01it/s]\rEpoch 0:   3%|▎         | 31/1000 [00:05<02:40,  6.02it/s]",
    "Epoch 0:   3%|▎         | 31/1000 [00:05<02:40,  6.02it/s]",  # pasted from a terminal: the last redraw only
    " 12%|█▏        | 12/100 [00:01<00:08, 10.2it/s, loss=2.31]",
], ids=["redraws", "pasted", "postfix"])
def test_a_progress_bar_glued_before_an_error_is_not_part_of_it(rules, bar, whole):
    facts = analyse(rules, PROGRESS + bar + "KeyError: 'LOCAL_RANK'\n", whole=whole)
    assert facts["log.root_cause"]["id"] == "launcher-env-missing"


def test_a_progress_bar_alone_keeps_its_text(rules):
    from troubleshooter.logs.lineprefix import split_prefix
    line = "[rank0]: 45%|████▌     | 450/1000 [01:00<01:10, 7.8it/s, loss=nan]"
    assert split_prefix(line).body == "45%|████▌     | 450/1000 [01:00<01:10, 7.8it/s, loss=nan]"


def test_argparse_wording_in_prose_or_a_passing_run_is_not_a_failure(rules):
    text = ("note: train.py: error handling was improved\n"
            "WARNING: argument parsing: error: ignored\n" + PROGRESS)
    assert shown(rules, analyse(rules, text)) == []


def test_a_refused_local_rank_keeps_its_own_finding(rules):
    facts = analyse(rules, PROGRESS + "usage: main.py [-h] [--local_rank LOCAL_RANK]\n"
                           "main.py: error: unrecognized arguments: --local-rank=0\n")
    assert shown(rules, facts)[0] != "unrecognized-failure"
