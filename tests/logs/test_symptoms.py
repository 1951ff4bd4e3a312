"""Symptoms of logs without an error line: duplicated per-rank output, stalls, rates across world sizes."""

from __future__ import annotations

from tests.logs.helpers import analyse, shown
from troubleshooter.logs.symptoms import HEAD, TAIL, SymptomScanner


def _eight_ranks_same_loss(prefix: str = "") -> str:
    values = ["38651.69", "58619.0", "34109.03", "49026.97", "31109.71"]
    return "".join(f"{prefix.format(r=r)}iter {i} loss: {v}\n" for i, v in enumerate(values) for r in range(8))


def test_the_same_loss_printed_by_every_rank_means_the_same_data(rules):
    for whole in (True, False):
        facts = analyse(rules, _eight_ranks_same_loss(), whole)
        assert (facts["log.loss_line_copies"], facts["log.loss_line_copies_share"]) == (8, 1.0)
        assert shown(rules, facts) == ["missing-distributed-sampler"]


def test_rank_labelled_loss_lines_are_a_per_rank_log_by_design(rules):
    for prefix in ("[rank{r}]: ", "{r}: "):
        facts = analyse(rules, _eight_ranks_same_loss(prefix))
        assert "log.loss_lines" not in facts
        assert shown(rules, facts) == []


def test_bare_values_printed_by_every_rank_count_as_loss_lines(rules):
    text = "".join(f"{v}\n" * 8 for v in ("38651.69", "58619.0 ", "34109.03", "49026.97"))
    facts = analyse(rules, "$ python -m torch.distributed.launch --nproc_per_node=8 train.py\n" + text)
    assert facts["log.loss_line_copies"] == 8
    assert shown(rules, facts) == ["missing-distributed-sampler"]


def test_copies_that_are_not_the_world_size_are_a_doubled_logger(rules):
    text = "Namespace(epochs=3, world_size=1)\n" + "".join(f"epoch {e} loss {0.5 - e / 10:.4f}\n" * 2 for e in range(4))
    facts = analyse(rules, text)
    assert facts["log.loss_line_copies"] == 2
    assert shown(rules, facts) == []


def test_timings_that_differ_between_ranks_do_not_hide_the_same_loss(rules):
    lines = [f"Epoch: [0]  [{i:4d}/1251]  eta: 0:1{r}:02  lr: 0.100000  loss: {6.9 - i / 1000:.4f} ({6.9:.4f})  "
             f"time: 0.{40 + r}21  data: 0.0{r}1  max mem: 1{r}512" for i in (0, 10, 20, 30) for r in range(4)]
    facts = analyse(rules, "\n".join(lines) + "\n")
    assert (facts["log.loss_lines"], facts["log.loss_line_copies"]) == (4, 4)
    assert shown(rules, facts) == ["missing-distributed-sampler"]


def test_per_rank_lines_with_their_own_losses_are_not_a_finding(rules):
    text = "".join(f"iter {i} loss: {1 + r / 10 + i / 100:.4f}\n" for i in range(6) for r in range(4))
    facts = analyse(rules, text)
    assert facts["log.loss_line_copies"] == 1
    assert shown(rules, facts) == []


def test_timestamps_and_rank_numbers_do_not_hide_a_copy(rules):
    text = "".join(f"2024-05-01 10:00:0{r},12{r} INFO rank {r}: epoch {e} step {s} loss 0.{e}{s}31\n"
                   for e in range(2) for s in range(3) for r in range(2))
    assert shown(rules, analyse(rules, text)) == ["missing-distributed-sampler"]


def test_progress_headers_printed_by_every_rank_are_logging_from_all_ranks(rules):
    text = "".join(f"[rank{r}]: Epoch {e}/10: starting\n" for e in range(5) for r in range(4))
    facts = analyse(rules, text)
    assert facts["log.progress_line_copies"] == 4
    assert shown(rules, facts) == ["logging-from-all-ranks"]


def test_progress_bar_redraws_are_not_copies(rules):
    bar = "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=1]\n"
    facts = analyse(rules, bar * 2 + bar.replace("4/18", "5/18") * 2 + bar.replace("4/18", "6/18") * 2
                   + bar.replace("4/18", "7/18") * 2)
    assert "log.loss_lines" not in facts and "log.progress_lines" not in facts
    assert shown(rules, facts) == []


def test_a_stall_at_the_end_of_an_epoch_before_a_timeout_is_an_uneven_last_batch(rules):
    bar = "Epoch 3:  {p}%|█████████▌| {s}/4435 [1:23:11<03:25,  1.17s/it, loss=0.213]\n"
    timeout = ("[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=92312, "
               "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800470 milliseconds before timing out.\n")
    late = analyse(rules, bar.format(p=96, s=4260) + timeout)
    assert late["log.progress_last_fraction"] > 0.9
    assert shown(rules, late)[0] == "uneven-last-batch"
    early = analyse(rules, bar.format(p=20, s=887) + timeout)
    assert shown(rules, early) == ["collective-timeout"]
    assert shown(rules, analyse(rules, bar.format(p=96, s=4260))) == []  # no timeout: a log cut short


def test_a_rate_that_halves_with_twice_the_ranks_is_poor_scaling(rules):
    def run(size: int, rate: str, total: int) -> str:
        return f"| distributed init (rank 0): env://, world_size: {size}\n" + "".join(
            f"Epoch 0: {i}%|█▌  | {i}/{total} [00:10<00:10, {rate}]\n" for i in range(1, 30))
    slow = analyse(rules, run(1, "1.33it/s", 100) + run(2, "1.38s/it", 50))
    assert slow["log.rate_world_sizes"] == [1, 2] and slow["log.rate_scaling"] < 0.6
    assert shown(rules, slow) == ["poor-scaling-efficiency"]
    assert shown(rules, analyse(rules, run(1, "1.33it/s", 100) + run(2, "1.30it/s", 50))) == []
    assert "log.rate_scaling" not in analyse(rules, run(2, "1.30it/s", 50))  # one world size: nothing to compare


def test_job_wide_sample_rates_are_compared_per_rank(rules):
    def run(size: int, rate: float) -> str:
        return (f"Num processes: {size}\n"
                f"{{'train_runtime': 60.1, 'train_samples_per_second': {rate}, 'epoch': 1.0}}\n")
    flat = analyse(rules, run(1, 100.0) + run(2, 110.0))
    assert flat["log.rate_scaling"] == 0.55
    assert shown(rules, flat) == ["poor-scaling-efficiency"]
    assert shown(rules, analyse(rules, run(1, 100.0) + run(2, 190.0))) == []
    per_gpu = analyse(rules, "World size: 1\nIter #0: 790.2 img/sec per GPU\nWorld size: 8\nIter #0: 402.5 img/sec per GPU\n")
    assert per_gpu["log.rate_scaling"] == round(402.5 / 790.2, 3)


def test_metric_logger_epochs_as_long_at_two_ranks_as_at_one(rules):
    def run(size: int, steps: int) -> str:
        return (f"Distributed training: True, world_size: {size}\n" + "".join(
            f"2022/11/07 10:41:2{i} - mmengine - INFO - Epoch(train) [1][{i * 10}/{steps}]  lr: 1.0000e-04\n"
            for i in range(1, 4)))
    assert shown(rules, analyse(rules, run(1, 857) + run(2, 857))) == ["missing-distributed-sampler"]
    assert shown(rules, analyse(rules, run(1, 857) + run(2, 429))) == []


def test_world_size_wordings_of_several_launchers(rules):
    for line, size in (("Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4", 4), ("Num processes: 2", 2),
                       ("$ python -m torch.distributed.launch --nproc_per_node=8 train.py", 8),
                       ("World size: 16", 16), ("{'WORLD_SIZE': '2'}", 2)):
        assert analyse(rules, line + "\n")["log.world_size_first"] == size, line


def test_the_scanner_keeps_only_the_head_and_the_tail():
    scanner = SymptomScanner()
    line = b"x" * 99 + b"\n"
    for _ in range(3 * (HEAD + TAIL) // (len(line) * 1000)):
        scanner.observe("big.log", line * 1000)
    head, tail = scanner.windows()
    assert len(head) <= HEAD and len(tail) <= TAIL
    assert head.endswith(b"\n") and tail.startswith(b"x")
