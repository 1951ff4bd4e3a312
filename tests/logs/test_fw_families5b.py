"""Framework families of the fifth pass, round two: a kernel symbol the loaded CUDA library lacks is a
build that does not match the system (NCCL inside a container image, an extension), and a log that ends
while c10d keeps failing to resolve the rendezvous name is a MASTER_ADDR that does not resolve; the same
lines in runs that go on, and look-alike lines, stay quiet."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

# cudaErrorSymbolNotFound told by NCCL's WARN line (with or without the numeric code), and by a
# library's own CUDA check, with torch's wrapper after it or alone.
SYMBOL_NOT_FOUND = [
    "host:48:48 [0] include/alloc.h:125 NCCL WARN Cuda failure 500 'named symbol not found'",
    "Cuda failure 'named symbol not found'",
    "Error named symbol not found at line 74 in file /src/csrc/ops.cu",
    "torch.distributed.DistBackendError: NCCL error in: /opt/conda/conda-bld/pytorch_1706743807255/work/torch/"
    "csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, unhandled cuda error (run with NCCL_DEBUG=INFO for "
    "details), NCCL version 2.21.5\nncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"
    "Cuda failure 999 'unknown error'\n\n"
    "host:48:48 [0] include/alloc.h:125 NCCL WARN Cuda failure 500 'named symbol not found'",
]


@pytest.mark.parametrize("text", SYMBOL_NOT_FOUND)
def test_missing_kernel_symbol_is_a_build_that_does_not_match(rules, text):
    root, shown = root_and_shown(rules, text)
    assert shown[:1] == ["library-version-incompatible"]


# NCCL's plugin probing reports missing symbols in healthy runs; an unhandled cuda error without a
# named reason stays the NCCL error it is.
SYMBOL_NEAR_MISSES = [
    "host:48:48 [0] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin_v8 symbol.",
    "host:48:48 [0] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin symbol (>= v5). "
    "ncclCollNetPlugin symbols v4 and lower are not supported.",
]


@pytest.mark.parametrize("line", SYMBOL_NEAR_MISSES)
def test_plugin_symbol_probing_stays_quiet(rules, line):
    root, shown = root_and_shown(rules, line)
    assert shown == []


def test_unhandled_cuda_error_without_reason_stays_an_nccl_error(rules):
    root, shown = root_and_shown(
        rules,
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
        "1691, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5")
    assert "library-version-incompatible" not in shown


# The log stops while c10d cannot resolve the store's name (torch 1.x and 2.x prefixes, a Kubernetes
# service name, a cluster-internal host).
STUCK_ON_NAME = [
    "[W socket.cpp:558] [c10d] The IPv6 network addresses of (pytorch-workers-0-0.pytorch-workers, 3389) "
    "cannot be retrieved (gai error: -2 - Name or service not known).",
    "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2\n"
    "[W1008 23:40:22.781961348 socket.cpp:767] [c10d] The IPv6 network addresses of (job-host1.internal, 50745) "
    "cannot be retrieved (gai error: -2 - Name or service not known).\n"
    "[W1008 23:40:52.781961348 socket.cpp:767] [c10d] The IPv6 network addresses of (job-host1.internal, 50745) "
    "cannot be retrieved (gai error: -2 - Name or service not known).",
]


@pytest.mark.parametrize("text", STUCK_ON_NAME)
def test_log_ending_on_an_unresolved_store_name_is_master_addr(rules, text):
    root, shown = root_and_shown(rules, text)
    assert shown[:1] == ["master-addr-unresolvable"]


def test_unresolved_name_in_a_run_that_trains_stays_quiet(rules):
    text = (
        "[W socket.cpp:558] [c10d] The IPv6 network addresses of (pytorch-workers-0-0.pytorch-workers, 3389) "
        "cannot be retrieved (gai error: -2 - Name or service not known).\n"
        "Epoch 0:  10%|#         | 100/1000 [00:30<04:30,  3.33it/s, loss=2.31]\n"
        "Epoch 0:  20%|##        | 200/1000 [01:00<04:00,  3.33it/s, loss=2.05]\n"
        "Epoch 0: 100%|##########| 1000/1000 [05:00<00:00,  3.33it/s, loss=1.10]\n")
    root, shown = root_and_shown(rules, text)
    assert shown == []


# The display watchdog killing a long kernel, told by torch 1.x, torch 2.x, the caching allocator's
# warning, c10::CUDAError's what() and another library's CUDA check.
LAUNCH_TIMEOUT = [
    "RuntimeError: CUDA error: the launch timed out and was terminated\nCUDA kernel errors might be "
    "asynchronously reported at some other API call,so the stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
    "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1614378083779/work/aten/src/THC/"
    "THCCachingHostAllocator.cpp line=278 error=702 : the launch timed out and was terminated",
    "[W CUDAGuardImpl.h:112] Warning: CUDA warning: the launch timed out and was terminated (function destroyEvent)\n"
    "terminate called after throwing an instance of 'c10::CUDAError'\n"
    "  what():  CUDA error: the launch timed out and was terminated",
    "'ret = cudaEventQuery( event.m_spEventImpl->m_CudaEvent)' returned error  : 'cudaErrorLaunchTimeout': "
    "'the launch timed out and was terminated'!",
]


@pytest.mark.parametrize("text", LAUNCH_TIMEOUT)
def test_launch_timeout_is_the_display_watchdog(rules, text):
    root, shown = root_and_shown(rules, text)
    assert shown[:1] == ["gpu-kernel-timeout"]


def test_collective_timeouts_are_not_the_display_watchdog(rules):
    root, shown = root_and_shown(
        rules,
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, "
        "Timeout(ms)=1800000) ran for 1800106 milliseconds before timing out.")
    assert "gpu-kernel-timeout" not in shown


# A launcher refusing to start ranks because it was asked for more processors than it may use:
# Open MPI's slots and ppr wordings, SLURM's step and batch submission wordings.
MORE_PROCESSES_THAN_ALLOWED = [
    ("There are not enough slots available in the system to satisfy the 8", "mpirun"),
    ("Your job has requested more processes than the ppr for\nthis topology can support:\n\n"
     "  App: /usr/bin/python\n  Number of procs:  32\n  PPR: 8:node", "mpirun"),
    ("srun: error: Unable to create step for job 238051: More processors requested than permitted", "srun"),
    ("sbatch: error: Batch job submission failed: More processors requested than permitted", "sbatch"),
]


@pytest.mark.parametrize("text,launcher", MORE_PROCESSES_THAN_ALLOWED)
def test_more_processes_than_the_allocation_allows(rules, text, launcher):
    root, shown = root_and_shown(rules, text)
    assert shown[:1] == ["mpi-slots-exceeded"]


def test_slurm_memory_refusal_is_not_a_processor_refusal(rules):
    root, shown = root_and_shown(
        rules, "srun: error: Unable to create step for job 29986033: Memory required by task is not available")
    assert "mpi-slots-exceeded" not in shown


# SLURM ending the job because a node failed, with no other cause in the log (srun's line, the
# slurmstepd banner of the job or of the step); with the survivors' NCCL errors those stay first.
NODE_FAILURE_ONLY = [
    "0: step   100 | loss 2.1\nsrun: error: Node failure on gpu-node-12",
    "slurmstepd: error: *** STEP 1943824.0 ON jean-zay-iam17 CANCELLED AT 2023-03-06T03:17:51 DUE TO NODE "
    "FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
]


@pytest.mark.parametrize("text", NODE_FAILURE_ONLY)
def test_node_failure_alone_is_the_infrastructure(rules, text):
    root, shown = root_and_shown(rules, text)
    assert shown[:1] == ["terminated-externally"]


def test_node_failure_with_the_survivors_errors_keeps_their_error_first(rules):
    root, shown = root_and_shown(
        rules,
        "srun: error: Node failure on gpu-node-12\n"
        "0: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
        "1347, remote process exited or there was a network error, NCCL version 2.18.5\n"
        "slurmstepd: error: *** STEP 991.0 ON gpu-node-11 CANCELLED AT 2024-05-03T02:11:09 DUE TO NODE FAILURE ***")
    assert shown[:1] == ["nccl-error"]
