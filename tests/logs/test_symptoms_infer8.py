"""Output printed twice over, line by line (a logger with two handlers, Tribler#4243's shape), is not two ranks
printing the same lines (``log.lines_repeated_in_place``, ``troubleshooter/logs/symptoms.py``; session 10). The
"output duplicated by 2 ranks" framing of ``bench/logs_metamorphic.py`` made the healthy pytorch-pytorch-14628
warn missing-distributed-sampler before this. Training lines alone repeated in place stay the ranks' symptom."""

from __future__ import annotations

import pytest

from tests.logs.helpers import analyse, shown

# real dev lines (pytorch-pytorch-14628, healthy: two ranks, each its own loss)
HEALTHY = ["2 GPUs", "GPU :  1", "2 GPUs", "GPU :  0",
           "Loss in epoch 0  =  2.16241826098016", "Loss in epoch 0  =  2.1587327145515602",
           "Loss in epoch 1  =  1.2776704367170943", "Loss in epoch 1  =  1.2715401794048067",
           "Loss in epoch 2  =  0.8121602121819841", "Loss in epoch 2  =  0.8152065771691342",
           "Loss in epoch 3  =  0.663035316162921", "Loss in epoch 3  =  0.6598308266477382"]
# the same run without a sampler: each rank computes the same loss; the ranks' own lines still differ
SAME_LOSS = ["2 GPUs", "GPU :  1", "2 GPUs", "GPU :  0"] + [
    f"Loss in epoch {epoch}  =  {loss}" for epoch, loss in enumerate((2.16241826, 1.27767043, 0.81216021, 0.66303531))
    for _ in range(2)]
PROGRESS = [f"Epoch {epoch} step {step}/40 done" for epoch in range(2) for step in range(0, 40, 10)]
STARTED = ["Using device cuda", "Loaded 1000 training samples", "Model has 11.7M parameters"] + PROGRESS
# NVIDIA/apex#840 (a missing sampler, 8 ranks): each rank's loss value, printed 8 times in a row, and nothing else
APEX_840 = "".join(f"{value}\n" * 8 for value in ("38651.69", "58619.0 ", "34109.03", "49026.97", "31109.71", "39532.15"))


def _twice(lines: list[str]) -> str:
    return "".join(f"{line}\n{line}\n" for line in lines)


# the same lines under one rank's label and one millisecond's stamp (pytorch-torchtitan-1618's shape)
STAMPED = [f"[rank0]:[titan] 2025-08-21 11:19:52,9{i}5 - root - INFO - Rank 0 batch {84 + i} start" for i in range(6)]


@pytest.mark.parametrize("lines", [HEALTHY, STARTED, STAMPED])
def test_output_printed_twice_line_by_line_is_no_rank_symptom(rules, lines):
    facts = analyse(rules, _twice(lines))
    assert facts["log.lines_repeated_in_place"] == 2
    assert not {"missing-distributed-sampler", "logging-from-all-ranks"} & set(shown(rules, facts))


def test_ranks_printing_the_same_loss_still_tell_a_missing_sampler(rules):
    facts = analyse(rules, "".join(f"{line}\n" for line in SAME_LOSS))
    assert "log.lines_repeated_in_place" not in facts
    assert shown(rules, facts)[:1] == ["missing-distributed-sampler"]


def test_progress_lines_of_every_rank_still_tell_logging_from_all_ranks(rules):
    lines = ["rank 1 ready", "rank 0 ready"] + [line for line in PROGRESS for _ in range(2)]
    assert "logging-from-all-ranks" in shown(rules, analyse(rules, "".join(f"{line}\n" for line in lines)))


@pytest.mark.parametrize("text", [APEX_840, "".join(f"{line}\n" * 2 for line in PROGRESS)])
def test_training_lines_alone_repeated_in_place_are_still_the_ranks(rules, text):
    facts = analyse(rules, text)
    assert "log.lines_repeated_in_place" not in facts
    assert set(shown(rules, facts)) & {"missing-distributed-sampler", "logging-from-all-ranks"}
