"""rich's traceback boxes (issue 11, session 12): accelerate's and typer's command lines install
``rich.traceback``, so a failing ``accelerate launch`` often shows its launcher's traceback as a box
(bmaltais/kohya_ss#897, huggingface/accelerate#1573 under a ``stderr: `` prefix, bitsandbytes#917). Its rows
all share one width and read as a terminal's hard wrap, and its frames (``/path/x.py:240 in main``) as no
frame at all: the exception after the box lost its file:line and the box's rows were glued together.
``framing.rich_frames`` writes a box as CPython's traceback before the shapes are read.
"""

from __future__ import annotations

import pytest

from tests.logs.helpers import analyse, shown

from troubleshooter.logs.framing import rich_frames

WIDTH = 100


def box(frames: list[tuple[str, ...]], lead: str = "") -> list[str]:
    """A rich traceback box: each frame is its header rows then its source row ``❱ N │ code``, with context."""
    def row(text: str) -> str:
        return lead + "│ " + text.ljust(WIDTH - 4) + " │"
    rows = [lead + "╭" + "─" * 30 + " Traceback (most recent call last) " + "─" * (WIDTH - 67) + "╮"]
    for *header, source in frames:
        rows += [row(text) for text in header]
        rows += [row(""), row("  12 │   # context"), row(source), row("  14 │   return x"), row("")]
    return rows + [lead + "╰" + "─" * (WIDTH - 2) + "╯"]


FRAMES = [("/home/user/proj/train.py:88 in <module>", "❱ 88 │   main()"),
          ("/home/user/venv/lib/python3.10/site-packages/datasets/load.py:1790 in", "load_dataset",
           "❱ 1790 │   │   builder.download_and_prepare()"),
          ("/home/user/venv/lib/python3.10/site-packages/torch/distributed/launcher/api.p", "y:245 in launch_agent",
           "❱ 245 │   │   │   raise ChildFailedError(")]


@pytest.mark.parametrize("lead", ["", "stderr: "])
def test_a_box_reads_as_cpython_frames(lead):
    rows = box(FRAMES, lead) + [lead + "KeyError: 'validation'"]
    out = rich_frames("\n".join(rows).encode()).decode().split("\n")
    assert len(out) == len(rows)  # line numbers still point into the box
    kept = [row[len(lead):] for row in out if row.strip()]
    assert kept == ["Traceback (most recent call last):",
                    '  File "/home/user/proj/train.py", line 88, in <module>', "    main()",
                    '  File "/home/user/venv/lib/python3.10/site-packages/datasets/load.py", line 1790, in load_dataset',
                    "    builder.download_and_prepare()",
                    '  File "/home/user/venv/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 245, '
                    "in launch_agent", "    raise ChildFailedError(", "KeyError: 'validation'"]


def test_the_unrecognized_failure_names_the_boxed_frame(rules):
    facts = analyse(rules, "\n".join(box(FRAMES[:2]) + ["KeyError: 'validation'"]) + "\n")
    hit = facts["log.unrecognized-failure"][0]
    assert hit["vars"]["location"].endswith("datasets/load.py:1790")
    assert hit["vars"]["exception"] == "KeyError: 'validation'"


def test_a_boxed_launcher_traceback_keeps_the_workers_own_cause(rules):
    worker = ["Traceback (most recent call last):", '  File "/home/user/proj/train.py", line 40, in <module>',
              "    model.cuda()",
              "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total "
              "capacity; 21.10 GiB already allocated)"]
    assert shown(rules, analyse(rules, "\n".join(worker + box(FRAMES[2:]) + ["ChildFailedError:"]) + "\n"))[0] \
        == "out-of-memory"


def test_rows_that_are_no_box_stay():
    text = "│ a table row │\n╭ not a traceback ╮\nKeyError: 'x'\n"
    assert rich_frames(text.encode()) == text.encode()
