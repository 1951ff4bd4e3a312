"""An unknown per-line prefix learnt from a short paste, before a known time stamp, and after a known rank label
(``troubleshooter/logs/framing.py``; session 10). The "an unknown tool's prefix" framing of
``bench/logs_metamorphic.py`` moved 4 dev verdicts before this: two one-line excerpts, a two-line excerpt and a
log whose only failure line states no exception (its rows begin with a torchrun time stamp)."""

from __future__ import annotations

import pytest

from tests.logs.helpers import analyse, shown
from tests.logs.metamorphic import TRANSFORMS

from troubleshooter.logs.framing import repair, unknown_prefix, unprefixed
from troubleshooter.logs.symptomwords import shipped_words

WORDS = shipped_words()
PREFIXED = TRANSFORMS["an unknown tool's prefix"]

# real dev lines (Lightning-AI-pytorch-lightning-6461, zai-org-ChatGLM2-6B-262, agentic-learning-ai-lab-midway-network-1)
ONE_LINE = "AssertionError: MPI world size 1 does not match torch world size 2\n"
TWO_LINES = ('raise SignalException(f"Process {os.getid()} got signal : {sigval}" ,sigval=sigval)\n'
             "torch.distributed.elastic.multiprocessing.api.SignalException: Process 81061 got sigval:1 \n")
STAMPED = ("[2026-02-02 16:08:09,507] torch.distributed.run: [WARNING] \n"
           "[2026-02-02 16:08:09,507] torch.distributed.run: [WARNING] *****************************************\n"
           "[2026-02-02 16:08:09,507] torch.distributed.run: [WARNING] Setting OMP_NUM_THREADS environment variable\n"
           "[2026-02-02 16:08:09,507] torch.distributed.run: [WARNING] *****************************************\n"
           "In 'hydra/config': Could not find 'hydra/launcher/submitit_local'\n")


@pytest.mark.parametrize("text", [ONE_LINE, TWO_LINES, STAMPED])
def test_an_unknown_prefix_is_removed_from_a_short_or_stamped_paste(text):
    assert unprefixed(PREFIXED(text).encode(), WORDS).decode() == text


@pytest.mark.parametrize("text", [ONE_LINE, TWO_LINES, STAMPED])
def test_the_verdict_holds_under_an_unknown_prefix(rules, text):
    assert shown(rules, analyse(rules, PREFIXED(text))) == shown(rules, analyse(rules, text))


@pytest.mark.parametrize("row", [
    "Epoch {i}/10 - 2025-08-21 11:19:5{i},968 - INFO - done",
    "step {i}00 loss 2.3{i} time 2025-08-21 11:19:5{i},968 - INFO - saved",
])
def test_progress_before_a_time_is_no_prefix(row):
    text = "".join(row.format(i=i) + "\n" for i in range(5))
    assert unprefixed(text.encode(), WORDS) == text.encode()


def test_a_known_rank_label_before_the_unknown_prefix_stays():
    text = "".join(f"[rank{r}]:[titan] 2025-08-21 11:19:52,9{i}8 - root - INFO - Rank {r} batch {i} start\n"
                   for i in range(4) for r in (0, 1))
    rows = unprefixed(text.encode(), WORDS).decode().splitlines()
    assert rows[1] == "[rank1]:2025-08-21 11:19:52,908 - root - INFO - Rank 1 batch 0 start"


@pytest.mark.parametrize("text", [
    # the kernel's report in a one-line excerpt: "Out of memory:" is the message, not a prefix (meta-llama-llama-cookbook-556)
    "[Sun Jun  9 11:49:36 2024] Out of memory: Killed process 7815 (pt_main_thread) total-vm:45371652kB\n",
    # a message that names an exception in passing on the one row
    "Loading failed because of a KeyError: 'model'\n",
    # a message ending in a colon before the exception
    "ERROR in worker 3: RuntimeError: CUDA out of memory.\n",
])
def test_no_prefix_is_learnt_from_a_message_on_a_short_paste(text):
    assert unknown_prefix(text.split("\n"), WORDS) is None


# real dev lines cut by a 100-column terminal (modelscope-ms-swift-9443; agentic-learning-ai-lab-midway-network-1):
# a cut right after a colon keeps the space that followed it on the next row; a row that ends in a banner's run
# at exactly the width is a whole line
COLLECTIVE = ("[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
              "CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], TensorDtypes=BFloat16)"
              ", but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE)\n")
BANNER = ("[2026-02-02 16:08:09,507] torch.distributed.run: [WARNING] " + "*" * 41 + "\n"
          "[2026-02-02 16:08:09,507] torch.distributed.run: [WARNING] Setting OMP_NUM_THREADS environment variable "
          "for each process to be 1 in default, to avoid your system being overloaded\n") * 2 + \
         "In 'hydra/config': Could not find 'hydra/launcher/submitit_local'\n"


@pytest.mark.parametrize("text", [COLLECTIVE, BANNER])
def test_a_100_column_terminal_cut_is_undone(text):
    cut = TRANSFORMS["wrapped at 100 columns"](text)
    assert cut != text
    assert [row for row in repair(cut.encode(), True).decode().splitlines() if row] == text.splitlines()


@pytest.mark.parametrize("rest, joined", [
    (" CollectiveFingerPrint(SequenceNumber=3104)", True),   # the space after the colon, kept by a terminal's cut
    ("CollectiveFingerPrint(SequenceNumber=3104)", False),   # a line of its own after a whole line
])
def test_a_row_at_the_width_ending_in_a_colon_goes_on_only_before_its_space(rest, joined):
    row = "Rank 1 is running collective number 3104 of the group, and now it reports it here: " + "x" * 16 + ":"
    assert len(row) == 100
    rows = repair(f"{row}\n{rest}\n".encode(), True).decode().splitlines()
    assert (rows[0] == row + rest) is joined
