"""Metamorphic invariances of the log analyzer (issue 11): a log's verdict does not depend on its framing.

A sample of the DEV split of ``tests/real/logs`` (never the test split) is re-framed by the
transformations of ``tests/logs/metamorphic.py`` that the analyzer is invariant to today, and the
``troubleshoot logs`` verdict (first finding shown, clean or not) must stay as it was. The full
measurement is ``python bench/logs_metamorphic.py``.
"""

from __future__ import annotations

import pytest

from tests.logs.metamorphic import TRANSFORMS, ansi_colour, duplicate, relabel, word_wrap, wrap
from tests.real.logquality import LogCase, cases, judge

from troubleshooter.logs.framing import repair, strip_ansi
from troubleshooter.logs.lineprefix import split_prefix

# the framings the dev corpus is invariant to (bench/logs_metamorphic.py: no verdict moves)
INVARIANT = (
    "torchrun [rankN]:", "torchrun [defaultN]:", "srun --label N: ", "srun label over torchrun",
    "mpirun [1,N]<stderr>:", "deepspeed/pdsh host: ", "deepspeed/pdsh ip: ", "ray (RayTrainWorker pid, ip)",
    "kubectl --prefix [pod/...]", "docker compose svc | ", "timestamp ISO-8601 Z", "timestamp syslog",
    "timestamp [Y-m-d H:M:S,ms]", "timestamp glog", "timestamp on its own line", "ANSI colours", "CRLF line ends",
    "wrapped at 80 columns", "wrapped at 120 columns", "sagemaker [1,mpirank:N,algo-1]", "loguru | LEVEL | where - ",
    "IPython traceback", "pytest E-lines", "markdown quote > ", "containerd CRI stderr F", "indent as tabs", "indent lost",
    "markdown indented block", "ranks interleaved", "shell prompt and command", "markdown code fence",
    "Windows paths", "non-ASCII user name", "tqdm bar glued before errors",
    "GitHub <details> block", "Jupyter cell output, colours kept", "forum typography (curly quotes, en dash)",
    "no-break spaces", "docker json-file lines", "timestamp ts (moreutils)", "logger asctime - name - LEVEL - ",
    "host then [timestamp]", "timestamp RFC 5424 + host", "timestamp Go log Y/m/d", "timestamp rich [m/d/y H:M:S]",
    "time of day only [H:M:S.ms]",
)
# a fast, fixed sample of the dev split (every 16th dev log by name when it was chosen): fixed by name, so
# logs added to the corpus later do not change what these tests pin
SAMPLE = (
    "ACEsuit-mace-435", "IGNF-myria3d-123", "NVIDIA-Megatron-LM-343", "NVIDIA-nccl-tests-14",
    "Project-MONAI-MONAI-5746", "aws-aws-k8s-tester-467", "dmlc-dgl-5547", "hmorimitsu-ptlflow-41",
    "jaywalnut310-vits-202", "meta-llama-llama-cookbook-59", "niuchuangnn-SPICE-26", "pytorch-pytorch-14628",
    "ray-project-ray-47286", "yinjunbo-ProposalContrast-3",
)


def _sample() -> list[LogCase]:
    return [case for case in cases("dev") if case.name in SAMPLE]


def test_the_sample_is_dev_logs():
    assert len(_sample()) == len(SAMPLE)  # all still in the corpus, and all on the dev side of the split


@pytest.fixture(scope="module")
def originals(rules):
    return {case.name: judge(case, rules) for case in _sample()}


def _verdict(rules, case: LogCase, text: str, tmp_path) -> tuple:
    path = tmp_path / f"{case.name}.log"
    path.write_bytes(text.encode("utf-8"))
    after = judge(LogCase(case.name, path, case.expect), rules)
    return after.first, after.clean


@pytest.mark.parametrize("name", INVARIANT)
def test_verdict_invariant_under_framing(rules, originals, name, tmp_path):
    transform = TRANSFORMS[name]
    moved = []
    for case in _sample():
        text = case.log.read_text(encoding="utf-8", errors="replace")
        before = originals[case.name]
        after = _verdict(rules, case, transform(text), tmp_path)
        if after != (before.first, before.clean):
            moved.append(f"{case.name}: {before.first} -> {after[0]}")
    assert not moved, f"{name} moved verdicts: {moved}"


def test_transformations_preserve_the_error_lines():
    """The re-framings keep every character of an error line in order (a harness check): relabelling keeps
    the text after the label, wrapping only inserts newlines, duplication keeps each line."""
    line = "[rank1]:RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3"
    assert relabel(lambda r: f"{r}: ")(line + "\n") == line.replace("[rank1]:", "1: ") + "\n"
    assert wrap(40)(line + "\n").replace("\n", "") == line
    assert duplicate("a\nb\n") == "a\na\nb\nb\n"


# a traceback as a real log shows it: the wrapped and coloured variants below must read the same
TRACE = """Traceback (most recent call last):
  File "/home/user/project/train.py", line 88, in <module>
    main()
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2050, in all_reduce
    work = group.allreduce([tensor], opts)
RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3
ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
"""


@pytest.mark.parametrize("width", [80, 100, 120])
def test_a_terminal_hard_wrap_is_undone_with_line_numbers_kept(width):
    wrapped = wrap(width)(TRACE)
    repaired = repair(wrapped.encode(), True).decode()
    assert [row for row in repaired.split("\n") if row] == [row for row in TRACE.split("\n") if row]
    assert repaired.count("\n") == wrapped.count("\n")  # joined-away rows stay as empty lines


def test_lines_that_share_the_longest_length_by_chance_are_not_joined():
    same = "".join(f"[rank{r}]:[E1121 23:25:31.000000 4000{r} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught "
                   f"collective operation timeout: WorkNCCL(SeqNum=4410, OpType=ALLREDUCE)\n"
                   f"[rank{r}]:[E1121 23:25:31.000000 4000{r} ProcessGroupNCCL.cpp:1785] stack trace not found\n"
                   for r in range(4))
    fixed = "".join(f"Epoch: [0]  [{i:4d}/1251]  eta: 0:1{r}:02  loss: 6.{i:04d}  time: 0.{40 + r}21\n"
                    for i in (0, 10, 20) for r in range(4))
    assert repair(same.encode(), True).decode() == same
    assert repair(fixed.encode(), True).decode() == fixed


def test_colours_are_removed_before_anything_is_read():
    coloured = ansi_colour(TRACE)
    assert "\x1b[" in coloured
    assert strip_ansi(coloured.encode()).decode() == TRACE
    assert repair(coloured.encode(), whole=False).decode() == TRACE
    plain = TRACE.encode()
    assert strip_ansi(plain) is plain  # no ESC byte: no copy


@pytest.mark.parametrize("line, rank, host", [
    ("172.16.220.18: Traceback (most recent call last):", None, "172.16.220.18"),  # pdsh with IP hosts
    ("localhost: RuntimeError: x", None, "localhost"),
    ("(RayTrainWorker pid=423719, ip=172.16.0.2) RuntimeError: x", None, None),
    ("(pid=21065) RuntimeError: x", None, None),
    ("[pod/pytorchjob-mnist-worker-0/pytorch] [rank1]: RuntimeError: x", 1, None),
    ("trainer-1  | RuntimeError: x", None, None),
    ("Mar  5 12:00:00 gpu-node-07 python3[48213]: RuntimeError: x", None, None),
    ("ERROR 10-27 07:48:16 worker_base.py:464] RuntimeError: x", None, None),  # vLLM's logger
    ("[INFO|trainer.py:1472] 2022-06-07 00:51:33,164 >> RuntimeError: x", None, None),  # HF's logger
    ("[rank: 1] RuntimeError: x", 1, None),  # Lightning
    ("0: [rank3]: RuntimeError: x", 3, None),  # srun --label around torchrun: the process's own rank wins
    ("[1,mpirank:3,algo-1]<stderr>:RuntimeError: x", 3, None),  # SageMaker's mpirun
    ("2024-03-05 12:00:00.123 | ERROR    | __main__:main:42 - RuntimeError: x", None, None),  # loguru
    ("E       RuntimeError: x", None, None),  # pytest's report of the exception
    ("> RuntimeError: x", None, None),  # quoted in a reply
    ("2024-03-05T12:00:00.037000123Z stderr F RuntimeError: x", None, None),  # containerd's CRI log file
])
def test_every_launcher_and_collector_prefix_is_peeled(line, rank, host):
    parsed = split_prefix(line)
    assert parsed.body.startswith(("RuntimeError: x", "Traceback"))
    assert (parsed.rank, parsed.host) == (rank, host)


def test_a_table_row_is_not_taken_for_a_prefix():
    assert split_prefix("epoch 1 | loss 0.3").body == "epoch 1 | loss 0.3"
    assert split_prefix("loss | 0.3").body == "loss | 0.3"


def test_an_ipython_traceback_is_read_as_one(rules):
    """Jupyter's frames (``File ~/x.py:12, in f``) count as frames: a cut traceback still names its place."""
    from tests.logs.helpers import analyse

    text = ("ValueError                                Traceback (most recent call last)\n"
            "Cell In[90], line 9\n"
            "File ~/anaconda3/lib/site-packages/transformers/trainer.py:2241, in Trainer.train(self)\n"
            "   2240 else:\n-> 2241     return inner_training_loop(\n")
    root = analyse(rules, text)["log.root_cause"]
    assert root["where"] == "~/anaconda3/lib/site-packages/transformers/trainer.py:2241"


def test_prefix_wordings_live_in_the_rules_and_are_checked(tmp_path):
    """``line_prefixes`` of rules/symptoms.yaml: a group that tells nothing known is reported with its line."""
    from troubleshooter.logs.symptomwords import parse_words

    (tmp_path / "symptoms.yaml").write_text("line_prefixes:\n  - '\\[rank(?P<rank>\\d+)\\]:'\n"
                                            "  - '(?P<node>\\w+):'\n", encoding="utf-8")
    issues: list = []
    raw = parse_words(tmp_path / "symptoms.yaml", issues)
    assert "line_prefixes" not in raw
    assert [(issue.line, "node" in issue.message) for issue in issues] == [(3, True)]


def test_a_forum_reflow_at_word_boundaries_is_joined_back():
    """A forum re-flowed a paste at 100 columns: rows broken where the next word would not fit are joined back
    (with the space the break took); whole lines that only happen to be long stay apart."""
    log = ("NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with the current PyTorch installation "
           "because the wheel was built for older GPUs only\n"
           "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 and nothing newer than that "
           "in this build\nsrun: error: node1: task 0: Exited with exit code 1\n")
    assert repair(word_wrap(100)(log).encode(), True).decode().replace("\n\n", "\n") == log
    lines = ("RuntimeError: the first message of a run that is long enough to come close to one hundred columns\n"
             "Segmentation fault (core dumped)\n"
             "ValueError: another message of a run that is long enough to come close to one hundred colum\n"
             "srun: error: node1: task 0: Exited with exit code 1\n")
    assert repair(lines.encode(), True).decode() == lines


def test_a_reflow_inside_frames_and_after_colons_is_joined_back():
    """A re-flowed paste whose indentation was lost: frame rows cut before ``line N, in f`` go on, and once the
    log is known to be re-flowed, rows cut after a colon go on too; whole frame rows stay before their source
    line, and a banner of ``*`` stays a line of its own however long."""
    log = ('File "/root/miniconda3/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 520, '
           'in init_process_group\n'
           'store, rank, world_size = next(rendezvous_iterator)\n'
           'File "/megatron/initialize.py", line 181, in _initialize_distributed\n'
           'torch.distributed.init_process_group(\n'
           'ImportError: /opt/conda/lib/python3.10/site-packages/torch/lib/../../../../nvidia/cusparse/lib/libcusparse.so.12:'
           ' undefined symbol\n'
           "RuntimeError: the first message of a run that is long enough to come close to one hundred columns, "
           "and more of it here\n"
           "RuntimeError: a second message of the same run, also long enough to be broken by the re-flow of the "
           "forum\n")
    repaired = repair(word_wrap(100)(log).encode(), True).decode()
    assert [row for row in repaired.split("\n") if row] == [row for row in log.split("\n") if row]


def test_a_reflow_that_left_a_row_at_a_terminal_width_is_not_a_hard_wrap():
    """A re-flow at 100 columns whose rows are mostly shorter also left one row of exactly 100 (a banner): the
    log is re-flowed, so that row is not glued to the next as a terminal's cut would be."""
    stamp = "[2026-02-02 16:08:09,507] torch.distributed.run: [WARNING] "
    log = (f"{stamp}{'*' * 41}\n{stamp}Setting OMP_NUM_THREADS environment variable for each process to be 1 in "
           "default, to avoid your system being overloaded, please further tune the variable for optimal "
           f"performance in your application as needed.\n{stamp}{'*' * 41}\n"
           "In 'hydra/config': Could not find 'hydra/launcher/submitit_local'\n")
    repaired = repair(word_wrap(100)(log).encode(), True).decode()
    assert [row for row in repaired.split("\n") if row] == [row for row in log.split("\n") if row]


def test_a_lone_reflowed_row_is_joined_when_the_sentence_goes_on():
    """Two rows, the first cut where the next word would not fit and the second going on in lower case: one
    line a re-flow broke (a hard wrap at the same width would have cut inside the word)."""
    log = ("[W socket.cpp:558] [c10d] The IPv6 network addresses of (pytorch-workers-0-0.pytorch-workers, 3389) "
           "cannot be retrieved (gai error: -2 - Name or service not known).\n")
    assert repair(word_wrap(100)(log).encode(), True).decode().replace("\n\n", "\n") == log


def test_what_starts_a_line_of_its_own_is_read_from_the_rules():
    """``own_line_starts`` of rules/symptoms.yaml (the mechanism in logs/framing.py): a row starting with a
    wording added there is no longer joined to the cut row before it."""
    import dataclasses
    import re

    from troubleshooter.logs.symptomwords import shipped_words

    wrapped = "".join(row + "\n" for row in ["x" * 50 + " " + "y" * 19 + " the first message of a run, long", "enough", "epoch 3 went on"])
    assert repair(wrapped.encode(), True).decode().replace("\n\n", "\n") != wrapped
    words = shipped_words()
    own = dataclasses.replace(words, own_line=re.compile(words.own_line.pattern[:-1] + "|enough)"))
    assert repair(wrapped.encode(), True, own).decode() == wrapped
