"""System probe: CPU cores, memory, load, /dev/shm, open-file limit and the thread demand of the job."""

from __future__ import annotations

import os
import resource
from pathlib import Path

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.launchers import launcher_table
from troubleshooter.core.probe import NODE, Probe, ProbeContext, ProbeResult

SHM_PATH = "/dev/shm"
# Variables a launcher sets with the number of ranks on this node, most specific first.


def _int(value: object) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def cgroup_cpu_limit() -> float | None:
    """CPUs granted by the cgroup CPU quota (cgroup v2 ``cpu.max`` or v1 cfs files), None when unlimited."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").read_text())
        period = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us").read_text())
        return None if quota <= 0 else quota / period
    except (OSError, ValueError):
        return None


class SystemProbe(Probe):
    """Measures cores, memory, load, /dev/shm and limits, and how many threads the job will want."""

    id = "system"
    title = "CPU, memory and shared memory"
    scope = NODE
    timeout_s = 5.0
    order = 20
    produces = (
        FactSpec("system.cpu_logical", "int", "Logical CPUs of the machine"),
        FactSpec("system.cpu_physical", "int", "Physical cores of the machine"),
        FactSpec("system.cpu_affinity", "int", "CPUs this process may run on (sched_getaffinity)"),
        FactSpec("system.cpu_quota", "float", "CPUs granted by the cgroup quota (absent when unlimited)"),
        FactSpec("system.cpus_usable", "int", "CPUs the job can really use: affinity capped by the cgroup quota"),
        FactSpec("system.mem_total_bytes", "int", "Total RAM"),
        FactSpec("system.mem_available_bytes", "int", "RAM available without swapping"),
        FactSpec("system.load_avg_1m", "float", "1-minute load average"),
        FactSpec("system.load_per_cpu", "float", "1-minute load average divided by the usable CPUs"),
        FactSpec("system.shm_present", "bool", "/dev/shm exists and is a directory"),
        FactSpec("system.shm_total_bytes", "int", "Size of /dev/shm"),
        FactSpec("system.shm_free_bytes", "int", "Free space in /dev/shm"),
        FactSpec("system.nofile_soft", "int", "Soft RLIMIT_NOFILE (open files)"),
        FactSpec("system.nofile_hard", "int", "Hard RLIMIT_NOFILE"),
        FactSpec("system.omp_num_threads", "int", "OMP_NUM_THREADS when set to an integer"),
        FactSpec("system.omp_num_threads_raw", "str", "OMP_NUM_THREADS exactly as set"),
        FactSpec("system.local_ranks", "int", "Ranks that will run on this node"),
        FactSpec("system.local_ranks_source", "str", "Where local_ranks came from: launcher (an env variable) or option"),
        FactSpec("system.dataloader_workers", "int", "DataLoader workers per rank, when known"),
        FactSpec("system.threads_per_rank", "int", "Compute threads per rank: OMP_NUM_THREADS, else torch's default "
                 "(one per physical core it may use)"),
        FactSpec("system.threads_demand", "int", "local_ranks x threads_per_rank + local_ranks x dataloader workers"),
        FactSpec("system.worker_processes", "int", "local_ranks x (1 + dataloader workers): busy processes on the node"),
    )

    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Read psutil, os and /proc; nothing is changed."""
        import psutil

        env = ctx.env
        facts: dict = {}
        logical = psutil.cpu_count(logical=True)
        physical = psutil.cpu_count(logical=False)
        facts["system.cpu_logical"] = logical
        facts["system.cpu_physical"] = physical
        affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None  # not measurable: absent
        facts["system.cpu_affinity"] = affinity
        quota = cgroup_cpu_limit()
        facts["system.cpu_quota"] = quota
        allowed = affinity or logical or 1
        usable = max(1, min(allowed, int(quota) if quota else allowed))
        facts["system.cpus_usable"] = usable

        mem = psutil.virtual_memory()
        facts["system.mem_total_bytes"] = int(mem.total)
        facts["system.mem_available_bytes"] = int(mem.available)
        load1 = os.getloadavg()[0]
        facts["system.load_avg_1m"] = round(load1, 2)
        facts["system.load_per_cpu"] = round(load1 / usable, 2)

        facts["system.shm_present"] = os.path.isdir(SHM_PATH)
        if facts["system.shm_present"]:
            st = os.statvfs(SHM_PATH)
            facts["system.shm_total_bytes"] = st.f_frsize * st.f_blocks
            facts["system.shm_free_bytes"] = st.f_frsize * st.f_bavail
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        facts["system.nofile_soft"] = soft if soft != resource.RLIM_INFINITY else None
        facts["system.nofile_hard"] = hard if hard != resource.RLIM_INFINITY else None

        omp = env.get("OMP_NUM_THREADS")
        if omp is not None:
            facts["system.omp_num_threads_raw"] = omp
            facts["system.omp_num_threads"] = _int(omp)

        local_ranks, source = None, None
        launchers = launcher_table()
        node_rank, _ = launchers.read(env, "node_rank")
        found, _ = launchers.read(env, "local_world_size", node_rank=node_rank)  # rules/launchers.yaml
        if found is not None:
            local_ranks, source = found, "launcher"
        if local_ranks is None and _int(ctx.options.get("nproc")) is not None:
            local_ranks, source = _int(ctx.options["nproc"]), "option"
        workers = _int(ctx.options.get("num_workers"))
        if workers is None and isinstance(ctx.facts.get("scan.dataloader_workers"), int):
            workers = ctx.facts["scan.dataloader_workers"]
        # torch's default intra-op pool is one thread per physical core the process may use.
        per_rank = facts.get("system.omp_num_threads") or min(physical or usable, usable)
        facts["system.threads_per_rank"] = per_rank
        if local_ranks is not None:
            facts["system.local_ranks"] = local_ranks
            facts["system.local_ranks_source"] = source
            facts["system.threads_demand"] = local_ranks * per_rank + local_ranks * (workers or 0)
            facts["system.worker_processes"] = local_ranks * (1 + (workers or 0))
        facts["system.dataloader_workers"] = workers

        gib = 1024 ** 3
        table = [
            ["cpus usable / logical / physical", f"{usable} / {logical} / {physical}"],
            ["memory available / total", f"{mem.available / gib:.1f} / {mem.total / gib:.1f} GiB"],
            ["load (1 min)", f"{load1:.2f}"],
            ["/dev/shm free / size", f"{facts.get('system.shm_free_bytes', 0) / gib:.2f} / "
                                     f"{facts.get('system.shm_total_bytes', 0) / gib:.2f} GiB"
             if facts["system.shm_present"] else "absent"],
            ["open files (soft / hard)", f"{soft} / {hard}"],
            ["OMP_NUM_THREADS", omp if omp is not None else "unset"],
            ["thread demand", facts.get("system.threads_demand", "unknown (ranks per node not known)")],
        ]
        message = f"{usable} usable CPUs, {mem.available / gib:.1f} GiB free RAM, /dev/shm " + (
            f"{facts['system.shm_total_bytes'] / gib:.2f} GiB" if facts["system.shm_present"] else "absent")
        return self.result(facts, message, table=table)
