"""Two launchers' views of the ranks contradicting each other is one family, whoever notices it:
DeepSpeed's MPI discovery against torch.distributed ("MPI world size 16 does not match torch world size 8",
"MPI rank 3 does not match torch rank 0"), its engine's LOCAL_RANK against OpenMPI's local rank, and NCCL
refusing a rank at or past the world size ("Invalid rank requested : 2/2"). The assert's own source line
(quoted in the traceback, with its braces) and other tools' rank errors are not it."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

CONTRADICTIONS = [
    "AssertionError: MPI world size 16 does not match torch world size 8",
    "AssertionError: MPI world size 1 does not match torch world size 2",
    "AssertionError: MPI rank 3 does not match torch rank 0",
    "AssertionError: LOCAL_RANK (0) != OMPI_COMM_WORLD_LOCAL_RANK (5), not sure how to proceed as we're seeing"
    " conflicting local rank info.",
    "node-a:146:146 [0] init.cc:932 NCCL WARN Invalid rank requested : 2/2",
    "worker-1:25:25 [0] init.cc:981 NCCL WARN Invalid rank requested : 4/4",
]


@pytest.mark.parametrize("text", CONTRADICTIONS)
def test_ranks_that_contradict_the_launcher_are_rank_env_inconsistent(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root == "rank-env-inconsistent"


NOT_IT = [
    '    assert ompi_local_rank == local_rank, f"LOCAL_RANK ({local_rank}) != OMPI_COMM_WORLD_LOCAL_RANK'
    ' ({ompi_local_rank}), " \\',
    '        assert cdb.get_world_size() == world_size, "MPI world size {} does not match torch world size {}".format(',
    "ValueError: Invalid rank requested: 7",
]


@pytest.mark.parametrize("text", NOT_IT)
def test_the_asserts_source_and_other_rank_errors_are_not_it(rules, text):
    root, _shown = root_and_shown(rules, text)
    assert root != "rank-env-inconsistent"
