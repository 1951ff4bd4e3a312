"""Hardware probe: torch / CUDA / cuDNN / NCCL versions, visible GPUs, backends, P2P and precision."""

from __future__ import annotations

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.launchers import launcher_table
from troubleshooter.core.probe import NODE, Probe, ProbeContext, ProbeResult

PRECISION_ALIASES = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16", "16": "fp16",
                     "16-mixed": "fp16", "bf16-mixed": "bf16", "bf16-true": "bf16", "fp32": "fp32", "32": "fp32",
                     "no": "fp32", "float32": "fp32"}
# Where users say which precision they want: the tool's option, then Accelerate's and Lightning's variables.
PRECISION_VARS = ("ACCELERATE_MIXED_PRECISION", "PL_PRECISION")


def requested_precision(ctx: ProbeContext) -> tuple[str | None, str | None]:
    """(normalised precision asked for, where it was read) or (None, None)."""
    value = ctx.options.get("precision")
    if value:
        return PRECISION_ALIASES.get(str(value).lower(), str(value).lower()), "option"
    for name in PRECISION_VARS:
        if ctx.env.get(name):
            return PRECISION_ALIASES.get(ctx.env[name].lower(), ctx.env[name].lower()), name
    return None, None


class HardwareProbe(Probe):
    """Reports the torch build, the GPUs this process sees, the backends built in and the precision to use."""

    id = "hardware"
    title = "GPUs, CUDA and backends"
    scope = NODE
    needs = ("torch",)
    timeout_s = 20.0
    order = 40
    produces = (
        FactSpec("hw.torch_version", "str", "torch.__version__"),
        FactSpec("hw.cuda_build", "str", "CUDA version torch was built with (torch.version.cuda)"),
        FactSpec("hw.cuda_available", "bool", "torch.cuda.is_available()"),
        FactSpec("hw.cudnn_version", "int", "torch.backends.cudnn.version()"),
        FactSpec("hw.nccl_version", "str", "Runtime NCCL version (torch.cuda.nccl.version())"),
        FactSpec("hw.gpu_count", "int", "GPUs visible to this process"),
        FactSpec("hw.gpus", "list", "Visible GPUs: index, name, compute capability, memory"),
        FactSpec("hw.min_compute_capability", "float", "Lowest compute capability among the visible GPUs"),
        FactSpec("hw.cuda_visible_devices", "str", "CUDA_VISIBLE_DEVICES as set"),
        FactSpec("hw.distributed_available", "bool", "torch.distributed.is_available()"),
        FactSpec("hw.nccl_available", "bool", "torch.distributed.is_nccl_available()"),
        FactSpec("hw.gloo_available", "bool", "torch.distributed.is_gloo_available()"),
        FactSpec("hw.mpi_available", "bool", "torch.distributed.is_mpi_available()"),
        FactSpec("hw.bf16_supported", "bool", "torch.cuda.is_bf16_supported() on the visible GPUs"),
        FactSpec("hw.p2p_matrix", "list", "Row i, column j: GPU i can access GPU j peer-to-peer"),
        FactSpec("hw.p2p_missing_pairs", "list", "GPU pairs [i, j] without peer-to-peer access"),
        FactSpec("hw.recommended_precision", "str", "bf16 at compute capability >= 8.0, fp16 below, fp32 without GPU"),
        FactSpec("hw.requested_precision", "str", "Precision asked for (option, ACCELERATE_MIXED_PRECISION, PL_PRECISION)"),
        FactSpec("hw.requested_precision_source", "str", "Where the requested precision was read"),
        FactSpec("hw.requested_backend", "str", "Backend asked for (option 'backend', unless auto)"),
        FactSpec("hw.default_backend", "str", "Backend the diagnosis would pick: nccl with GPUs, else gloo"),
        FactSpec("hw.local_rank", "int", "This process's local rank (LOCAL_RANK or the launcher's equivalent)"),
    )

    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Import torch and ask it; no CUDA context is created without GPUs."""
        import torch
        import torch.distributed as dist

        facts: dict = {"hw.torch_version": torch.__version__, "hw.cuda_build": torch.version.cuda}
        ctx.phase("cuda")
        cuda = torch.cuda.is_available()
        facts["hw.cuda_available"] = cuda
        facts["hw.cudnn_version"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        if "CUDA_VISIBLE_DEVICES" in ctx.env:
            facts["hw.cuda_visible_devices"] = ctx.env["CUDA_VISIBLE_DEVICES"]
        facts["hw.distributed_available"] = dist.is_available()
        if dist.is_available():
            facts["hw.nccl_available"] = dist.is_nccl_available()
            facts["hw.gloo_available"] = dist.is_gloo_available()
            facts["hw.mpi_available"] = dist.is_mpi_available()
        gpus: list[dict] = []
        if cuda:
            try:
                nccl = torch.cuda.nccl.version()
                facts["hw.nccl_version"] = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)
            except (AttributeError, RuntimeError):
                pass
            for i in range(torch.cuda.device_count()):
                props = torch.cuda.get_device_properties(i)
                gpus.append({"index": i, "name": props.name, "compute_capability": f"{props.major}.{props.minor}",
                             "memory_bytes": int(props.total_memory)})
            facts["hw.bf16_supported"] = bool(torch.cuda.is_bf16_supported())
        facts["hw.gpu_count"] = len(gpus)
        facts["hw.gpus"] = gpus
        if gpus:
            facts["hw.min_compute_capability"] = min(float(g["compute_capability"]) for g in gpus)
            facts["hw.recommended_precision"] = "bf16" if facts["hw.min_compute_capability"] >= 8.0 else "fp16"
        else:
            facts["hw.recommended_precision"] = "fp32"
        if len(gpus) > 1:
            ctx.phase("p2p")
            n = len(gpus)
            matrix = [[i == j or bool(torch.cuda.can_device_access_peer(i, j)) for j in range(n)] for i in range(n)]
            facts["hw.p2p_matrix"] = matrix
            facts["hw.p2p_missing_pairs"] = [[i, j] for i in range(n) for j in range(n) if not matrix[i][j]]

        precision, source = requested_precision(ctx)
        facts["hw.requested_precision"] = precision
        facts["hw.requested_precision_source"] = source
        backend = ctx.options.get("backend")
        if backend and backend != "auto":
            facts["hw.requested_backend"] = str(backend)
        facts["hw.default_backend"] = "nccl" if gpus and facts.get("hw.nccl_available") else "gloo"
        local_rank, _ = launcher_table().read(ctx.env, "local_rank")  # LOCAL_RANK or the launcher's own
        if local_rank is not None:
            facts["hw.local_rank"] = local_rank

        table = [[g["index"], g["name"], g["compute_capability"], f"{g['memory_bytes'] / 1024 ** 3:.1f} GiB"]
                 for g in gpus]
        if gpus:
            message = f"{len(gpus)} GPU(s), CUDA {torch.version.cuda}, NCCL {facts.get('hw.nccl_version', '?')}; " \
                      f"use {facts['hw.recommended_precision']}"
        else:
            message = f"no GPU visible (torch {torch.__version__}): CPU with gloo, fp32"
        return self.result(facts, message, table=table, table_header=["gpu", "name", "cc", "memory"])
