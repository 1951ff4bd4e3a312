"""Re-flows narrower than 80 columns (issue 11, session 11): a forum or mail client that re-flowed a paste at
80 columns may leave no row longer than 64-79 characters (the next word was a long path or name), and a word
too long for any row must not hide the cap the re-flow left. Programs' own paragraphs at those widths (Open
MPI's help texts) stay apart; a line that begins as a program's line does, or tells a failure, is joined back.
"""

from __future__ import annotations

import re

import pytest

from tests.logs.metamorphic import TRANSFORMS
from tests.real.logquality import cases, judge

from troubleshooter.logs.framing import reflow_cap, repair
from troubleshooter.logs.symptomwords import shipped_words

WORDS = shipped_words()
REFLOW_80 = TRANSFORMS["re-flowed at words, 80 columns"]

# dev logs whose first finding the 80-column re-flow moved before this pass (bench/logs_metamorphic.py)
LOGS = ("HamPerdredes-SOOD-33", "FangjinhuaWang-PatchmatchNet-35", "Lightning-AI-pytorch-lightning-21402",
        "SkyworkAI-SkyReels-V2-55", "UQ-RCC-hpc-docs-2", "huggingface-accelerate-1802", "NVIDIA-nccl-tests-206",
        "forum-gitcode-applio-cuda-fork", "deepspeedai-DeepSpeedExamples-370")


@pytest.fixture(scope="module")
def dev_cases():
    return {case.name: case for case in cases("dev")}


@pytest.mark.parametrize("name", LOGS)
def test_an_80_column_reflow_keeps_the_first_finding(name, dev_cases, rules, tmp_path):
    case = dev_cases[name]
    before = judge(case, rules)
    reflowed = tmp_path / f"{name}.log"
    reflowed.write_text(REFLOW_80(case.log.read_text(encoding="utf-8", errors="replace")), encoding="utf-8")
    after = judge(type(case)(case.name, reflowed, case.expect), rules)
    assert before.root_first and after.first == before.first


def joined(text: str) -> str:
    """``text`` repaired, the empty rows joined-away rows leave removed."""
    return re.sub(r"\n+", "\n", repair(text.encode(), True, WORDS).decode())


@pytest.mark.parametrize("reflowed, line", [
    # an exception's message broken where the next word would not have fitted under 79 columns
    ("RuntimeError: the store at node-a:29500 could not be reached by rank 3 before\n"
     "the deadline of 1800 seconds expired\n",
     "RuntimeError: the store at node-a:29500 could not be reached by rank 3 before "
     "the deadline of 1800 seconds expired\n"),
    # a program's prose that tells a failure
    ("An error occurred while loading shard 7 of the checkpoint: cannot allocate the\n"
     "pinned host buffer of 4096 MB for it\n",
     "An error occurred while loading shard 7 of the checkpoint: cannot allocate the "
     "pinned host buffer of 4096 MB for it\n"),
    # a short paste re-flowed at 80 columns whose longest row is 61 characters
    ("RuntimeError: The server socket has failed to listen on any\n"
     "local network address. The server socket has failed to bind.\n",
     "RuntimeError: The server socket has failed to listen on any "
     "local network address. The server socket has failed to bind.\n"),
])
def test_a_line_reflowed_narrower_than_80_columns_is_joined(reflowed, line):
    assert joined(reflowed) == line


def test_a_programs_own_paragraph_at_78_columns_stays_apart():
    """Open MPI's help text wraps itself: prose that tells no failure is not joined at a narrow cap."""
    text = ("There are not enough slots available in the system to satisfy the 4 slots \n"
            "that were requested by the application:\n"
            "  train\n"
            "\n"
            "Either request fewer slots for your application, or make more slots available\n"
            "for use.\n")
    assert joined(text) == text.replace("\n\n", "\n")


def test_the_cap_ignores_a_row_of_one_unbreakable_word():
    rows = ["ImportError: /opt/env/lib/python3.12/site-packages/ext.so: undefined symbol:",
            "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
            "a row of words"]
    assert reflow_cap(rows) == len(rows[0])


LABELLED = """\
2024-01-01 10:00:05,669 - ERROR: Exception occurred during the training run:
Traceback (most recent call last):
File "/data/.local/share/virtualenvs/workspace/lib/python3.10/site-packages/torch/serialization.py", line 441, in save
_save(obj, opened_zipfile, pickle_module, pickle_protocol)
File "/data/.local/share/virtualenvs/workspace/lib/python3.10/site-packages/torch/serialization.py", line 668, in _save
zip_file.write_record(name, storage.data_ptr(), num_bytes)
RuntimeError: [enforce fail at inline_container.cc:471] . PytorchStreamWriter failed writing file data/228: file write failed
"""


def test_a_rank_labelled_traceback_reflowed_at_100_columns_is_joined_with_its_spaces():
    """Rows a re-flow left at the cap go on lines it broke shorter (``[rank0]:File`` / a long path): they were
    broken at a word, not cut by a terminal, so their spaces come back (``line 441``, ``writing file``)."""
    labelled = TRANSFORMS["torchrun [rankN]:"](LABELLED)
    assert joined(TRANSFORMS["re-flowed at words, 100 columns"](labelled)) == labelled


def test_a_records_field_after_a_break_goes_on_the_row_before():
    """``local_rank: 0`` (a field and its number) continues torchelastic's record; a tool's ``srun: error``
    after a broken row still starts a line of its own."""
    line = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 4242) "
            "of binary: /opt/conda/envs/train/bin/python\n")
    assert joined(REFLOW_80(line)) == line
    rows = ("slurmstepd: error: Detected 1 oom_kill event in StepId=4242.0 cgroup. Some of your\n"
            "srun: error: node-3: task 1: Out Of Memory\n")
    assert joined(rows) == rows


def test_nccls_lines_begin_a_line_and_are_joined_back_under_a_narrow_cap():
    """NCCL's ``host:pid:tid [device]`` begins every line it prints: such a line re-flowed narrower than 80
    columns is joined back, and the next NCCL line is never glued to it."""
    lines = ("node-a:4242:4300 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to "
             "^docker,lo,veth_def_agent\n"
             "node-a:4242:4300 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n"
             "node-a:4242:4310 [1] graph/xml.h:101 NCCL WARN Attribute arch of node cpu not found in the topology\n")
    assert joined(REFLOW_80(lines)) == lines
