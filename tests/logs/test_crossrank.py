"""Which rank never arrived at a timed-out collective, and NCCL builds that differ across ranks."""

from tests.logs.helpers import analyse as analyse_whole, analyse_lines, findings_of, torchrun_summary
from troubleshooter.logs.crossrank import named_ranks

GLOO_WAIT = ("[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] "
             "Timed out waiting 5000ms for recv operation to complete")
SUMMARY = torchrun_summary(0, killed=((1, 15),))


def analyse(rules, text):
    facts = analyse_lines(rules, text)
    return facts, findings_of(rules, facts)


def test_the_rank_without_its_own_timeout_is_the_one_named(rules):
    facts, findings = analyse(rules, GLOO_WAIT + "\n" + SUMMARY)
    assert facts["log.stuck_ranks"] == [1] and facts["log.waiting_ranks"] == [0]
    first = findings[0]
    assert first.id == "collective-timeout" and first.ranks == [1]
    assert "rank 1 did not arrive" in first.title


def test_every_rank_timed_out_names_no_one(rules):
    both = GLOO_WAIT + "\n" + GLOO_WAIT.replace("[rank0]", "[rank1]") + "\n" + SUMMARY
    facts, findings = analyse(rules, both)
    assert "log.stuck_ranks" not in facts
    assert findings[0].id == "collective-timeout" and findings[0].ranks == [0, 1]


def test_silent_ranks_outnumbering_the_waiting_ones_are_not_blamed(rules):
    ranks = "\n".join(f"[rank{r}]: step 10 loss 0.5" for r in range(4))
    facts, _ = analyse(rules, ranks + "\n" + GLOO_WAIT)
    assert facts["log.waiting_ranks"] == [0] and "log.stuck_ranks" not in facts


def test_monitored_barrier_names_the_absent_ranks(rules):
    facts, findings = analyse(rules, "[rank0]: RuntimeError: Ranks 1, 3 failed to pass monitoredBarrier in 2000 ms")
    assert facts["log.stuck_ranks"] == [1, 3]
    assert findings[0].id == "collective-timeout" and "ranks 1, 3 did not arrive" in findings[0].title
    assert {1, 3} <= set(findings[0].ranks)


def test_desync_report_names_the_lagging_rank():
    assert named_ranks("[2] finished collective #4, but didn't join collective #5 (count from 1)") == [2]
    assert named_ranks("1, 3") == [1, 3]
    assert named_ranks("no ranks here") == []


def test_two_nccl_banners_are_a_version_mismatch(rules):
    log = ("a:1:1 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\nb:2:2 [0] NCCL INFO NCCL version 2.20.5+cuda12.3\n"
           "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, internal error, "
           "NCCL version 2.20.5")
    facts, findings = analyse(rules, log)
    assert facts["log.nccl_version_count"] == 2
    assert findings[0].id == "version-mismatch-across-ranks"


def test_an_error_line_version_beside_one_banner_is_no_mismatch(rules):
    log = ("a:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
           "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, internal error, "
           "NCCL version 2.18.1")
    facts, findings = analyse(rules, log)
    assert facts["log.nccl_version_count"] == 1
    assert "version-mismatch-across-ranks" not in {f.id for f in findings}


def test_a_rank_seen_only_in_its_own_progress_lines_is_the_absent_one(rules):
    watchdog = ("[rank{r}]:[E1123 10:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
                "operation timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
                "ran for 600042 milliseconds before timing out.")
    log = "\n".join([*(watchdog.format(r=r) for r in range(3)), "[rank3]:epoch 3 step 120 saving checkpoint"])
    facts, findings = analyse_file(rules, log)
    assert facts["log.stuck_ranks"] == [3] and facts["log.waiting_ranks"] == [0, 1, 2]
    assert findings[0].ranks == [3] and "rank 3 did not arrive" in findings[0].title


def analyse_file(rules, text):
    """Through ``feed_file`` (the CLI's path), where unmatched lines are never decoded one by one."""
    facts = analyse_whole(rules, text + "\n")
    return facts, findings_of(rules, facts)
