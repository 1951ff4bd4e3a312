"""Two start-up failures of the launched programs, each in every wording the public logs show.

An MPI launcher that cannot exec the program on a node is a missing tool, in either MPI's words:
OpenMPI's help text ("mpirun was unable to find the specified executable file") and MPICH / Intel MPI
Hydra's "execvp error on file X (No such file or directory)". Hydra refusing a file for its permissions
is another failure, and the help text's NOTE about misspelt options is no failure by itself.

mkl-service stopping a worker because Intel's threading layer meets GNU OpenMP ("MKL_THREADING_LAYER=INTEL
is incompatible with libgomp[-hash].so.1") is a library conflict; a run forced past it keeps printing the
line, so any real crash in the same log is the root cause."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

OPENMPI = """--------------------------------------------------------------------------
mpirun was unable to find the specified executable file, and therefore
did not launch the job.  This error was first reported for process
rank 0; it may have occurred for other processes as well.

NOTE: A common cause for this error is misspelling a mpirun command
      line parameter option (remember that mpirun interprets the first
      unrecognized command line token as the executable).

Node:       node-a
Executable: train.py
--------------------------------------------------------------------------
"""

NOT_FOUND = [
    OPENMPI,
    "[proxy:0:0@node-a] HYDU_create_process (utils/launch/launch.c:75): execvp error on file ./train (No such file"
    " or directory)",
    "[proxy:0@node-b] HYDU_create_process (lib/utils/launch.c:73): execvp error on file train.py (No such file or"
    " directory)",
]


@pytest.mark.parametrize("text", NOT_FOUND)
def test_an_mpi_launcher_that_cannot_exec_the_program_is_tool_missing(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "tool-missing"


NOT_IT = [
    "[proxy:0:0@node-a] HYDU_create_process (utils/launch/launch.c:74): execvp error on file ./train"
    " (Permission denied)",
    "NOTE: A common cause for this error is misspelling a mpirun command",
]


@pytest.mark.parametrize("text", NOT_IT)
def test_other_exec_errors_and_the_help_note_are_not_a_missing_program(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root != "tool-missing"


MKL_CONFLICT = [
    "Error: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is incompatible with libgomp.so.1 library.\n"
    "\tTry to import numpy first or set the threading layer accordingly. Set MKL_SERVICE_FORCE_INTEL to force it.",
    "Error: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is incompatible with libgomp-a34b3233.so.1 library.",
]


@pytest.mark.parametrize("text", MKL_CONFLICT)
def test_mkl_refusing_gnu_openmp_in_the_workers_is_a_library_conflict(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "library-version-incompatible"


def test_a_real_crash_outranks_the_mkl_message_a_forced_run_keeps_printing(rules):
    text = (MKL_CONFLICT[1] + "\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity)\n")
    root, _shown = root_and_shown(rules, text)
    assert root == "out-of-memory"
