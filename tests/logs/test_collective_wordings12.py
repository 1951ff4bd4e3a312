"""A collective mismatch in NCCL's own words, not only in torch's.

TORCH_DISTRIBUTED_DEBUG=DETAIL reports ranks that call different collectives as a CollectiveFingerPrint
mismatch, but most runs do not set it: then the first to notice is NCCL itself, whose device-side check
prints one WARN line naming a rank ("Mismatched collective detected, please check your collective calls
at and around rank N", NCCL 2.4 on, from init.cc, init.cu or enqueue.cc). That line alone is the diagnosis
(NVIDIA/nccl#296); it outranks the "invalid usage" NCCL error torch wraps it in, and yields to a
transport failure in the same log, whose corrupted traffic trips the same check (NVIDIA/nccl#214)."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

NCCL_MISMATCH = [
    # the bare WARN line, as pasted in a report (NCCL 2.4.8)
    "init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around"
    " rank 39. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs",
    # NCCL's host:pid:tid [dev] prefix, several ranks reporting, built from the .cu sources
    """node-a:39719:39719 [3] init.cu:1197 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 11. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs

node-a:39727:39727 [7] init.cu:1197 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 15. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs
""",
    # under torchrun's rank prefix, followed by the NCCL error torch raises for it
    """[rank1]:[W ProcessGroupNCCL.cpp:1250] Warning: a collective is still running
node-b:212:212 [1] enqueue.cc:1390 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 1. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs
[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3
[rank1]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.
""",
]


@pytest.mark.parametrize("text", NCCL_MISMATCH)
def test_nccls_own_mismatch_check_is_a_collective_mismatch(rules, text):
    root, shown = root_and_shown(rules, text)
    assert (root, shown[:1]) == ("collective-mismatch", ["collective-mismatch"])


def test_a_transport_error_in_the_same_log_outranks_the_mismatch_it_causes(rules):
    text = """node-a:39719:39790 [3] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 4, opcode 1, len 21938, vendor err 81
node-a:39719:39719 [3] init.cu:1197 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 11. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs
"""
    root, _shown = root_and_shown(rules, text)
    assert root == "nccl-error"
