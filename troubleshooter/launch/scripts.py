"""Ready-to-submit scripts that run the distributed diagnosis (``troubleshoot launch`` writes them).

One Jinja template per launcher in ``troubleshooter/launch/templates/``: an sbatch script with
srun, an mpirun line with binding and exported variables, per-node torchrun / deepspeed
``--no_ssh`` commands. Each script checks first that the tools its launcher needs exist.
"""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from troubleshooter.core.errors import UsageError

TEMPLATES = Path(__file__).resolve().parent / "templates"
# launcher -> (tools the script needs and why, MASTER_ADDR default when --master-addr is not given)
LAUNCHERS: dict[str, tuple[tuple[tuple[str, str], ...], str]] = {
    "slurm": ((("srun", "the SLURM job step launcher"), ("scontrol", "expands the node list to find rank 0's host")),
              '$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)'),
    "mpirun": ((("mpirun", "the MPI launcher (OpenMPI)"),), ""),
    "torchrun": ((("torchrun", "PyTorch's launcher (pip install torch)"),), "127.0.0.1"),
    "deepspeed": ((("deepspeed", "the DeepSpeed launcher (pip install deepspeed)"),), "127.0.0.1"),
}
HOSTFILE_FIRST_HOST = "$(awk 'NF && $1 !~ /^#/ {print $1; exit}' \"$HOSTFILE\")"


def render_script(launcher: str, nodes: int, gpus_per_node: int, partition: str | None = None,
                  master_addr: str | None = None, master_port: int = 29500, name: str = "troubleshoot.sh") -> str:
    """The script text for ``launcher``; a UsageError for impossible sizes."""
    if launcher not in LAUNCHERS:
        raise UsageError(f"unknown launcher {launcher!r}; choose one of {', '.join(LAUNCHERS)}")
    if nodes < 1 or gpus_per_node < 1:
        raise UsageError(f"--nodes and --gpus-per-node must be at least 1 (got {nodes} and {gpus_per_node})")
    if not 0 < master_port < 65535:
        raise UsageError(f"--master-port {master_port} is not a usable port (the diagnosis also uses port + 1)")
    tools, default = LAUNCHERS[launcher]
    if launcher == "mpirun":
        default = HOSTFILE_FIRST_HOST if nodes > 1 else "127.0.0.1"
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), undefined=StrictUndefined, trim_blocks=True,
                      lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
    return env.get_template(f"{launcher}.sh.j2").render(
        nodes=nodes, gpus_per_node=gpus_per_node, partition=partition, master_addr=master_addr,
        master_default=master_addr or default, master_port=master_port, tools=tools, name=name)
