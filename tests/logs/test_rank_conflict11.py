"""Two processes claiming one rank, told by NCCL's bootstrap root, in every library that prints it.

NCCL's bootstrap root refuses a second check-in for a rank ("rank R of N ranks has already checked in")
and a check-in that counts another world size ("mismatch in rank count from procs A : B"); RCCL and the
NCCL-derived libraries print the same words. torch then reports only a generic NCCL error (system or
internal error, by NCCL version), so the root's line is the cause: two processes computed the same RANK
(every node believing it is node 0, one task per node where the launcher starts one per GPU). The root's
INFO line for a normal check-in is no conflict."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

TORCH_1X = "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch/work/torch/lib/c10d/ProcessGroupNCCL.cpp:825, " \
           "unhandled system error, NCCL version 2.7.8"
TORCH_2X = """torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, internal error - please report this issue to the NCCL developers, NCCL version 2.21.5
ncclInternalError: Internal check failed."""

CONFLICTS = [
    # Lightning under srun without --ntasks-per-node (Lightning-AI/pytorch-lightning#14986)
    "hpc-25-14:18569:18835 [0] bootstrap.cc:131 NCCL WARN Bootstrap Root : rank 1 of 8 ranks has already checked in\n"
    + TORCH_1X,
    "node-0:2211:2305 [0] misc/bootstrap.cc:201 NCCL WARN Bootstrap Root : rank 3 of 16 ranks has already checked in\n"
    + TORCH_2X,
    "node-0:2211:2305 [0] bootstrap.cc:128 NCCL WARN Bootstrap Root : mismatch in rank count from procs 8 : 16\n"
    + TORCH_2X,
    # RCCL prints the NCCL words
    "node-0:311:402 [0] /src/rccl/src/bootstrap.cc:250 NCCL WARN Bootstrap Root : rank 0 of 2 ranks has already"
    " checked in",
]


@pytest.mark.parametrize("text", CONFLICTS)
def test_a_rank_checked_in_twice_is_an_inconsistent_rank_environment(rules, text):
    root, shown = root_and_shown(rules, text)
    assert (root, shown[:1]) == ("rank-env-inconsistent", ["rank-env-inconsistent"])


def test_a_normal_check_in_is_no_conflict(rules):
    root, _shown = root_and_shown(rules, "node-0:1:2 [0] NCCL INFO Bootstrap Root : rank 1 of 8 ranks checked in")
    assert root != "rank-env-inconsistent"
