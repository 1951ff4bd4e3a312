"""Structure over strings: wrappers yield to the reason they quote, exits are decoded, failures never pass as clean."""

from __future__ import annotations

from tests.logs.helpers import analyse_lines, findings_of, shown


def test_the_original_reason_beats_the_abort_that_quotes_it(rules):
    facts = analyse_lines(rules, """
RuntimeError: NCCL communicator was aborted on rank 3. Original reason for failure was: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600123 milliseconds before timing out.
""")
    assert facts["log.root_cause"]["id"] == "collective-timeout"
    assert "log.nccl-error" not in facts


def test_without_a_wrapper_both_messages_count(rules):
    facts = analyse_lines(rules, "RuntimeError: NCCL communicator was aborted on rank 3.\n")
    assert facts["log.root_cause"]["id"] == "nccl-error"


def test_sigkill_after_the_time_limit_is_the_time_limit(rules):
    facts = analyse_lines(rules, """
slurmstepd: error: *** STEP 12.0 ON node1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***
srun: error: node1: tasks 0-3: Terminated
""")
    assert facts["log.root_cause"]["id"] == "scheduler-time-limit"
    assert shown(rules, facts)[0] == "scheduler-time-limit"


def test_deepspeed_return_code_minus_9_is_host_memory(rules):
    facts = analyse_lines(rules, "[ERROR] [launch.py:324:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
                          "'--local_rank=0'] exits with return code = -9\n")
    assert facts["log.root_cause"]["id"] == "out-of-memory"


def test_a_traceback_nobody_recognises_is_still_a_failure(rules):
    facts = analyse_lines(rules, """
step 10 loss 0.5
Traceback (most recent call last):
  File "train.py", line 12, in <module>
    main()
  File "train.py", line 9, in main
    frobnicate(batch)
ZeroDivisionError: division by zero
""")
    [hit] = facts["log.unrecognized-failure"]
    assert hit["vars"]["exception"] == "ZeroDivisionError: division by zero"
    assert hit["vars"]["location"] == "train.py:9"
    assert shown(rules, facts) == ["unrecognized-failure"]


def test_a_launcher_exit_without_rank_is_still_a_failure(rules):
    facts = analyse_lines(rules, "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 3) "
                          "local_rank: 0 (pid: 42) of binary: /usr/bin/python\n")
    [hit] = facts["log.unrecognized-failure"]
    assert hit["vars"]["exit_code"] == 3


def test_an_exception_named_inside_a_warning_is_not_a_failure(rules):
    facts = analyse_lines(rules, "WARNING: retrying after ConnectionError: temporary\nstep 10 loss 0.5\n")
    assert shown(rules, facts) == []


def test_an_excerpt_ending_in_a_bare_exception_is_a_failure(rules):
    facts = analyse_lines(rules, "step 10 loss 0.5\nValueError: frobnication failed for batch 3\n")
    [hit] = facts["log.unrecognized-failure"]
    assert hit["vars"]["exception"] == "ValueError: frobnication failed for batch 3"


def test_missing_hostfile_is_a_cause_only_when_one_was_asked_for(rules):
    notice = ("[2024-05-01 10:00:00,000] [WARNING] [runner.py:202:fetch_hostfile] Unable to find hostfile, "
              "will proceed with training with local resources only.")
    assert shown(rules, analyse_lines(rules, notice)) == []
    facts = analyse_lines(rules, f"$ deepspeed --hostfile=/job/hostfile train.py\n{notice}\n")
    assert shown(rules, facts) == ["hostfile-missing"]


def test_legacy_device_wording_inside_the_loss_is_the_loss(rules):
    facts = analyse_lines(rules, """
  File "train.py", line 40, in step
    loss = criterion(out, target)
RuntimeError: Expected object of device type cuda but got device type cpu for argument #3 'weight' in call to _thnn_nll_loss_forward
""")
    assert facts["log.root_cause"]["id"] == "loss-not-on-device"


def test_a_traceback_cut_before_its_exception_is_still_a_failure(rules):
    facts = analyse_lines(rules, """
  File "/opt/lib/python3.11/site-packages/deepspeed/runtime/engine.py", line 309, in __init__
    self._configure_optimizer(optimizer, model_parameters)
""")
    [hit] = facts["log.unrecognized-failure"]
    assert hit["vars"]["location"].endswith("engine.py:309")


def test_epochs_as_long_at_two_ranks_as_at_one_mean_no_sampler(rules):
    one = "Namespace(epochs=1, world_size=1)\nEpoch 0: 100%|██████████| 391/391 [00:30<00:00, 12.9it/s]\n"
    facts = analyse_lines(rules, one + "| distributed init (rank 0): env://, world_size: 2\n"
                              "Epoch 0: 100%|██████████| 391/391 [00:31<00:00, 12.6it/s]\n")
    assert (facts["log.world_size_first"], facts["log.world_size_last"]) == (1, 2)
    assert shown(rules, facts) == ["missing-distributed-sampler"]
    sharded = analyse_lines(rules, one + "| distributed init (rank 0): env://, world_size: 2\n"
                                  "Epoch 0: 100%|██████████| 196/196 [00:16<00:00, 12.2it/s]\n")
    assert shown(rules, sharded) == []



_INNER = """
Traceback (most recent call last):
  File "train.py", line 5, in <module>
    local_rank = int(os.environ["LOCAL_RANK"])
KeyError: 'LOCAL_RANK'
"""
_OUTER = """
Traceback (most recent call last):
  File "train.py", line 9, in <module>
    torch.cuda.set_device(0)
RuntimeError: CUDA error: invalid device ordinal
"""


def test_a_chained_exception_yields_to_the_one_it_was_raised_from(rules):
    for marker in ("The above exception was the direct cause of the following exception:",
                   "During handling of the above exception, another exception occurred:"):
        facts = analyse_lines(rules, _INNER + "\n" + marker + "\n" + _OUTER)
        assert facts["log.root_cause"]["id"] == "launcher-env-missing"
        assert "log.local-rank-exceeds-devices" in facts  # still shown, just not first


def test_without_a_chain_the_higher_priority_exception_wins(rules):
    facts = analyse_lines(rules, _INNER + _OUTER)
    assert facts["log.root_cause"]["id"] == "local-rank-exceeds-devices"


def test_caused_by_names_the_reason_but_may_be_caused_by_is_only_advice(rules):
    facts = analyse_lines(rules, "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3, "
                          "caused by: NCCL WARN Call to shm_open failed : Permission denied\n")
    assert facts["log.root_cause"]["id"] == "shm-too-small"
    assert not any(hit["id"] == "nccl-error" for hit in facts.get("log.suppressed", []))  # replaced, never recorded
    facts = analyse_lines(rules, "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3. "
                          "This may be caused by: NCCL WARN Call to shm_open failed\n")
    assert any(hit["id"] == "nccl-error" for hit in facts.get("log.suppressed", []))  # recorded, then outranked


def test_titles_name_what_the_log_shows(rules):
    def title(line: str) -> str:
        return findings_of(rules, analyse_lines(rules, line))[0].title

    assert title("""RuntimeError: "addmm_impl_cpu_" not implemented for 'Half'""").startswith("Half precision (fp16)")
    assert title("RuntimeError: Current CUDA Device does not support bfloat16.").startswith("bf16 requested")
    assert title("RuntimeError: Distributed package doesn't have NCCL built in") == "NCCL is not built into this PyTorch"
    assert title("AttributeError: module 'torch.distributed' has no attribute 'init_process_group'") == (
        "The distributed backend this run needs is not built into this PyTorch")


def test_a_hang_explains_the_sigterm_that_ended_it(rules):
    """Whoever stopped a hung job (the scheduler, a user, ``troubleshoot run --stall``), the hang is the cause:
    the SIGTERM the log shows comes second even when the hang was seen by another source (the live stall)."""
    from troubleshooter.core.engine import order_findings
    from troubleshooter.core.findings import Evidence, Finding

    sigterm = "torch.distributed.elastic.multiprocessing.api.SignalException: Process 15127 got signal: 15\n"
    log_findings = findings_of(rules, analyse_lines(rules, sigterm))
    assert [f.id for f in log_findings] == ["terminated-externally"]
    for hang in ("collective-timeout", "ranks-missing-at-rendezvous"):
        seen_live = Finding(hang, "error", "hang", category="communication", evidence=[Evidence("live", "stalled")])
        assert [f.id for f in order_findings(rules, [*log_findings, seen_live])] == [hang, "terminated-externally"]
