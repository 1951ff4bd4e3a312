"""Crashes as launchers report them: the failed rank's own first error, device-index failures by evidence."""

from __future__ import annotations

from tests.logs.helpers import analyse_lines, torchrun_summary

_SUMMARY = torchrun_summary(root_rank=0)


def test_an_error_before_the_process_group_shows_its_exception_not_the_placeholder(rules):
    facts = analyse_lines(rules, """
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
    facts = analyse_lines(rules, _SUMMARY)
    assert facts["log.failed_ranks"] == [0]
    assert "log.rank-crashed" in facts or "log.unrecognized-failure" in facts


def test_a_bare_invalid_ordinal_is_more_ranks_than_gpus(rules):
    facts = analyse_lines(rules, "RuntimeError: CUDA error: invalid device ordinal\n")
    assert facts["log.root_cause"]["id"] == "local-rank-exceeds-devices"


def test_an_invalid_ordinal_after_a_fixed_index_is_that_index(rules):
    facts = analyse_lines(rules, """
Traceback (most recent call last):
  File "eval.py", line 40, in <module>
    model = model.to("cuda:5")
RuntimeError: CUDA error: invalid device ordinal
""")
    assert facts["log.root_cause"]["id"] == "cuda-invalid-device"


def test_killed_after_a_cut_progress_bar_is_host_memory(rules):
    facts = analyse_lines(rules, "Loading checkpoint shards:   0%|          | 0/7 [00:00<?, ?it/s]Killed\n")
    assert facts["log.root_cause"]["id"] == "out-of-memory"


def test_a_kill_after_the_time_limit_is_not_also_host_memory(rules):
    facts = analyse_lines(rules, """
slurmstepd: error: *** STEP 12.0 ON node1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***
Killed
""")
    assert facts["log.root_cause"]["id"] == "scheduler-time-limit"
    assert "log.out-of-memory" not in facts


def test_an_attribute_read_on_the_wrapper_names_the_attribute(rules):
    facts = analyse_lines(rules, "[rank1]: AttributeError: 'DistributedDataParallel' object has no attribute 'generate'\n")
    assert facts["log.root_cause"]["id"] == "ddp-wrapper-attribute"
    assert facts["log.ddp-wrapper-attribute"][0]["vars"]["attribute"] == "generate"
    internal = analyse_lines(rules, "AttributeError: 'DistributedDataParallel' object has no attribute '_sync_params'\n")
    assert "log.ddp-wrapper-attribute" not in internal


def test_the_launchers_sigterm_to_the_other_ranks_is_not_a_second_failure(rules):
    facts = analyse_lines(rules, """
[rank1]: Traceback (most recent call last):
[rank1]:   File "/w/train.py", line 20, in compute
[rank1]:     raise ValueError("label out of range")
[rank1]: ValueError: label out of range
W0101 10:00:00.000000 1 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 101 closing signal SIGTERM
""" + torchrun_summary(1, killed=((0, 15),), title=False))
    assert facts["log.rank-crashed"][0]["rank"] == 1
    assert "log.unrecognized-failure" not in facts


def test_a_sigkill_the_launcher_escalated_to_is_not_host_memory(rules):
    facts = analyse_lines(rules, """
Traceback (most recent call last):
  File "/w/train.py", line 88, in <module>
    main()
  File "/w/train.py", line 70, in main
    batch = next(it)
StopIteration
W0101 10:00:00.000000 1 torch/distributed/elastic/multiprocessing/api.py:890] Sending process 101 closing signal SIGTERM
W0101 10:00:30.000000 1 torch/distributed/elastic/multiprocessing/api.py:908] Unable to shutdown process 101 via Signals.SIGTERM, forcefully exiting via Signals.SIGKILL
E0101 10:00:31.000000 1 torch/distributed/elastic/multiprocessing/api.py:863] failed (exitcode: 1) local_rank: 1 (pid: 102) of binary: /usr/bin/python
""" + torchrun_summary(1, killed=((0, 9),)))
    assert facts["log.rank-crashed"][0]["vars"]["exception"] == "StopIteration"
    assert "log.out-of-memory" not in facts


def test_a_kernel_assertion_is_the_cause_and_the_watchdogs_device_side_assert_its_echo(rules):
    facts = analyse_lines(rules, """
../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [58,0,0], thread: [10,0,0] Assertion `srcIndex < srcSelectDimSize` failed.
[E ProcessGroupNCCL.cpp:915] [Rank 1] NCCL watchdog thread terminated with exception: CUDA error: device-side assert triggered
""")
    assert facts["log.root_cause"]["id"] == "cuda-device-assert"
    assert facts["log.cuda-device-assert"][0]["vars"]["assertion"] == "srcIndex < srcSelectDimSize"


def test_every_launchers_wording_of_a_signal_is_decoded(rules):
    cases = {
        "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL": "out-of-memory",
        "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGSEGV": "native-crash",
        "subprocess.CalledProcessError: Command '['python', '-u', 'train.py', '--local_rank=1']' returned non-zero exit status -9.": "out-of-memory",
        "subprocess.CalledProcessError: Command '['python', 'train.py']' died with <Signals.SIGBUS: 7>.": "shm-too-small",
        "      Reason:       OOMKilled": "out-of-memory",
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1234.0 cgroup.": "out-of-memory",
        "terminate called after throwing an instance of 'c10::Error'": "native-crash",
        "RuntimeError: DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient.": "ddp-without-trainable-parameters",
    }
    for line, want in cases.items():
        assert analyse_lines(rules, line + "\n")["log.root_cause"]["id"] == want, line


def test_an_mp_spawn_exit_is_a_failure_of_that_process(rules):
    facts = analyse_lines(rules, "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with exit code 1\n")
    values = facts["log.unrecognized-failure"][0]["vars"]
    assert (values["local_rank"], values["exit_code"]) == (3, 1)


def test_more_wordings_of_device_memory_and_library_failures(rules):
    cases = {
        "train.py: error: the following arguments are required: --local_rank": "local-rank-argument",
        "RuntimeError: module must have its parameters and buffers on device cuda:1 (device_ids[0]) but found one of them on device: cuda:0": "device-mismatch",
        "RuntimeError: DistributedDataParallel's input module must be on the same type of devices, but input module parameters locate in {'cuda', 'cpu'}.": "ddp-before-to-device",
        "MemoryError: Unable to allocate 3.58 GiB for an array with shape (480000000,) and data type float64": "out-of-memory",
        "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.29' not found (required by libtorch_python.so)": "library-version-incompatible",
    }
    for line, want in cases.items():
        assert analyse_lines(rules, line + "\n")["log.root_cause"]["id"] == want, line


def test_a_sigkill_in_another_ranks_record_after_the_first_crash_is_the_teardown(rules):
    facts = analyse_lines(rules, """
Traceback (most recent call last):
  File "/w/train.py", line 88, in <module>
    main()
  File "/w/train.py", line 70, in main
    batch = next(it)
StopIteration
W0101 10:00:00.000000 1 torch/distributed/elastic/multiprocessing/api.py:890] Sending process 101 closing signal SIGTERM
E0101 10:00:31.000000 1 torch/distributed/elastic/multiprocessing/api.py:863] failed (exitcode: 1) local_rank: 1 (pid: 102) of binary: /usr/bin/python
""" + torchrun_summary(1, killed=((0, 9),)))
    assert facts["log.rank-crashed"][0]["rank"] == 1
    assert "log.out-of-memory" not in facts
    assert any(s["id"] == "out-of-memory" and s["rank"] == 0 for s in facts["log.suppressed"])


def test_a_sigkill_alone_is_still_host_memory(rules):
    facts = analyse_lines(rules, "E0101 10:00:31.000000 1 torch/distributed/elastic/multiprocessing/api.py:863] "
                          "failed (exitcode: -9) local_rank: 0 (pid: 102) of binary: /usr/bin/python\n")
    assert facts["log.root_cause"]["id"] == "out-of-memory"


def test_yolov5s_device_count_assertion_is_more_ranks_than_gpus(rules):
    facts = analyse_lines(rules, "AssertionError: insufficient CUDA devices for DDP command\n")
    assert facts["log.root_cause"]["id"] == "local-rank-exceeds-devices"


def test_a_bare_assertion_on_the_device_count_is_more_ranks_than_gpus(rules):
    facts = analyse_lines(rules, """
Traceback (most recent call last):
  File "train.py", line 543, in <module>
    assert torch.cuda.device_count() > opt.local_rank
AssertionError
""")
    assert facts["log.root_cause"]["id"] == "local-rank-exceeds-devices"


_UNLABELLED_OOM = """
Traceback (most recent call last):
  File "/w/train.py", line 70, in main
    loss.backward()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 23.65 GiB of which 1.2 GiB is free.
"""


def test_without_rank_labels_the_unlabelled_cause_is_the_first_failed_ranks_own(rules):
    """torch < 2.2 prints no [rankN]: prefix: the launcher's first failed rank owns the unlabelled cause."""
    facts = analyse_lines(rules, _UNLABELLED_OOM + torchrun_summary(1, killed=((0, 15),)))
    assert (facts["log.root_cause"]["id"], facts["log.root_cause"]["rank"]) == ("out-of-memory", 1)
    assert "log.rank-crashed" not in facts


def test_an_unlabelled_echo_or_another_ranks_labelled_error_does_not_own_the_crash(rules):
    echo = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:28048\n"
    facts = analyse_lines(rules, echo + torchrun_summary(1, killed=((0, 15),)))
    assert facts["log.rank-crashed"][0]["rank"] == 1
    labelled = "".join("[rank0]: " + line + "\n" for line in _UNLABELLED_OOM.strip().splitlines())
    facts = analyse_lines(rules, labelled + torchrun_summary(1, killed=((0, 15),)))
    assert facts["log.rank-crashed"][0]["rank"] == 1
