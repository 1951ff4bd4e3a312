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


# NCCL's plugin probing reports missing symbols in healthy runs; an unhandled cuda error without a
# named reason stays the NCCL error it is.
SYMBOL_NEAR_MISSES = [
    "host:48:48 [0] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin_v8 symbol.",
    "host:48:48 [0] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin symbol (>= v5). "
    "ncclCollNetPlugin symbols v4 and lower are not supported.",
]

UNHANDLED_WITHOUT_REASON = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
    "1691, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5")


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

# the same line in a run that goes on training
UNRESOLVED_BUT_TRAINS = (
    "[W socket.cpp:558] [c10d] The IPv6 network addresses of (pytorch-workers-0-0.pytorch-workers, 3389) "
    "cannot be retrieved (gai error: -2 - Name or service not known).\n"
    "Epoch 0:  10%|#         | 100/1000 [00:30<04:30,  3.33it/s, loss=2.31]\n"
    "Epoch 0:  20%|##        | 200/1000 [01:00<04:00,  3.33it/s, loss=2.05]\n"
    "Epoch 0: 100%|##########| 1000/1000 [05:00<00:00,  3.33it/s, loss=1.10]\n")


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

COLLECTIVE_TIMEOUT = ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, "
                      "Timeout(ms)=1800000) ran for 1800106 milliseconds before timing out.")


# A launcher refusing to start ranks because it was asked for more processors than it may use:
# Open MPI's slots and ppr wordings, SLURM's step and batch submission wordings.
MORE_PROCESSES_THAN_ALLOWED = [
    ("There are not enough slots available in the system to satisfy the 8", "mpirun"),
    ("Your job has requested more processes than the ppr for\nthis topology can support:\n\n"
     "  App: /usr/bin/python\n  Number of procs:  32\n  PPR: 8:node", "mpirun"),
    ("srun: error: Unable to create step for job 238051: More processors requested than permitted", "srun"),
    ("sbatch: error: Batch job submission failed: More processors requested than permitted", "sbatch"),
]

SLURM_MEMORY_REFUSAL = "srun: error: Unable to create step for job 29986033: Memory required by task is not available"


# SLURM ending the job because a node failed, with no other cause in the log (srun's line, the
# slurmstepd banner of the job or of the step); with the survivors' NCCL errors those stay first.
NODE_FAILURE_ONLY = [
    "0: step   100 | loss 2.1\nsrun: error: Node failure on gpu-node-12",
    "slurmstepd: error: *** STEP 1943824.0 ON jean-zay-iam17 CANCELLED AT 2023-03-06T03:17:51 DUE TO NODE "
    "FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
]

# with the survivors' NCCL errors, theirs stays first
NODE_FAILURE_WITH_SURVIVORS = (
    "srun: error: Node failure on gpu-node-12\n"
    "0: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
    "1347, remote process exited or there was a network error, NCCL version 2.18.5\n"
    "slurmstepd: error: *** STEP 991.0 ON gpu-node-11 CANCELLED AT 2024-05-03T02:11:09 DUE TO NODE FAILURE ***")


def _rows(name: str, texts: list, want: str) -> list:
    return [pytest.param(text, want, id=f"{name}-{i}") for i, text in enumerate(texts)]


# A wording and the finding the report must show first.
FIRST_SHOWN = [
    *_rows("symbol-not-found", SYMBOL_NOT_FOUND, "library-version-incompatible"),
    *_rows("stuck-on-name", STUCK_ON_NAME, "master-addr-unresolvable"),
    *_rows("launch-timeout", LAUNCH_TIMEOUT, "gpu-kernel-timeout"),
    *(pytest.param(text, "mpi-slots-exceeded", id=f"more-processes-{launcher}-{i}")
      for i, (text, launcher) in enumerate(MORE_PROCESSES_THAN_ALLOWED)),
    *_rows("node-failure-only", NODE_FAILURE_ONLY, "terminated-externally"),
    pytest.param(NODE_FAILURE_WITH_SURVIVORS, "nccl-error", id="node-failure-with-survivors"),
]


@pytest.mark.parametrize(("text", "want"), FIRST_SHOWN)
def test_each_wording_shows_its_finding_first(rules, text, want):
    _, shown = root_and_shown(rules, text)
    assert shown[:1] == [want]


# A look-alike and what it must not be shown as.
NOT_SHOWN = [
    pytest.param(UNHANDLED_WITHOUT_REASON, "library-version-incompatible", id="unhandled-cuda-error-no-reason"),
    pytest.param(COLLECTIVE_TIMEOUT, "gpu-kernel-timeout", id="collective-timeout-not-display-watchdog"),
    pytest.param(SLURM_MEMORY_REFUSAL, "mpi-slots-exceeded", id="slurm-memory-refusal"),
]


@pytest.mark.parametrize(("text", "absent"), NOT_SHOWN)
def test_look_alikes_are_not_shown_as_that(rules, text, absent):
    _, shown = root_and_shown(rules, text)
    assert absent not in shown


QUIET = [*(pytest.param(line, id=f"plugin-probing-{i}") for i, line in enumerate(SYMBOL_NEAR_MISSES)),
         pytest.param(UNRESOLVED_BUT_TRAINS, id="unresolved-but-trains")]


@pytest.mark.parametrize("text", QUIET)
def test_healthy_lines_show_nothing(rules, text):
    _, shown = root_and_shown(rules, text)
    assert shown == []
