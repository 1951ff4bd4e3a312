"""Real faults injected on this machine and diagnosed through the real CLI.

Each fault sets up a genuine failure (a bound port, a name that does not resolve, a missing
interface, a rank that never joins, a SIGKILL, two network namespaces that cannot reach each other),
runs ``troubleshoot`` exactly as a user would (``--auto``, ``run -- torchrun ...``, ``probe``) with
``--format json``, and returns the command, its exit code, the report and the wall time. The verdict
compares the report's first warning/error finding with the catalog id the fault should produce.

Used by ``bench/live_faults.py`` (every fault, a table) and ``tests/live_faults`` (a fast subset).
Nothing here imports torch or the troubleshooter: the CLI runs in subprocesses.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from tests.distributed.conftest import free_port  # P and P+1 free: the diagnosis store takes P+1
from troubleshooter.core.launchers import launcher_table

JOBS = Path(__file__).resolve().parent / "jobs"
# Not launcher variables (those come from rules/launchers.yaml), but they change how the job talks or runs.
NETWORK_PREFIXES = ("NCCL_", "GLOO_", "TORCH_")
DEVICE_VARS = {"CUDA_VISIBLE_DEVICES"}
NETNS_ADDRS = ("10.78.0.1", "10.78.0.2")


@dataclass
class Outcome:
    """What one diagnosis produced."""

    command: str
    returncode: int | None
    report: dict | None
    seconds: float
    note: str = ""
    control: Outcome | None = None  # the healthy counterpart, where the fault has one

    def first(self) -> dict | None:
        """The first warning or error finding of the report."""
        for finding in (self.report or {}).get("findings", []):
            if finding.get("severity") in ("error", "warning"):
                return finding
        return None

    def shown(self) -> str:
        """The first finding as ``id [ranks]``, or what happened instead."""
        first = self.first()
        if first is None:
            return "no report" if self.report is None else "nothing (clean)"
        ranks = first.get("ranks") or []
        return first["id"] + (f" [rank {','.join(map(str, ranks))}]" if ranks else "")


@dataclass(frozen=True)
class Fault:
    """A fault, how to inject and diagnose it, and what the catalog says it is."""

    name: str
    description: str
    expected: tuple[str, ...]  # finding ids accepted as the first finding (the catalog's best first)
    diagnose: Callable[[Path, bool], Outcome]  # (work dir, full default probe set?) -> outcome
    rank: int | None = None  # the rank the first finding must name
    netns: bool = False  # needs root + ip netns
    mountns: bool = False  # needs root + unshare -m (a private /dev/shm)
    slow: bool = False  # starts torchrun jobs or waits for timeouts (tens of seconds)
    extra: tuple[str, ...] = field(default=())  # other finding ids the report must also carry


def verdict(fault: Fault, outcome: Outcome) -> tuple[bool, str]:
    """(passed, reason): the first warning/error is expected, names the rank, exit code 1, control clean."""
    first = outcome.first()
    if outcome.report is None:
        return False, f"no report ({outcome.note or 'exit ' + str(outcome.returncode)})"
    if first is None or first["id"] not in fault.expected:
        return False, f"first finding {outcome.shown()}, expected {' or '.join(fault.expected)}"
    if fault.rank is not None and (first.get("ranks") or []) != [fault.rank]:
        return False, f"names ranks {first.get('ranks')}, expected [{fault.rank}]"
    ids = {f["id"] for f in outcome.report["findings"]}
    missing = [i for i in fault.extra if i not in ids]
    if missing:
        return False, f"report lacks {', '.join(missing)}"
    if outcome.returncode != 1:
        return False, f"exit code {outcome.returncode}, expected 1 (findings)"
    if outcome.control is not None:
        control_first = outcome.control.first()
        if outcome.control.report is None or control_first is not None:
            return False, f"healthy control not clean: {outcome.control.shown()} ({outcome.control.command})"
    return True, "ok"


# ---------------------------------------------------------------- processes

def clean_env(**extra: str) -> dict[str, str]:
    """os.environ without launcher / NCCL / gloo variables (the interpreter's bin dir first on PATH), plus extra."""
    dropped = launcher_table().all_variables() | DEVICE_VARS
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith(NETWORK_PREFIXES)}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update({"PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"})
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def kill_tree(pid: int) -> None:
    """SIGKILL a process, its group and every descendant (torchrun puts ranks in sessions of their own)."""
    try:
        victims = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        victims = []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for proc in victims:
        with contextlib.suppress(psutil.Error):
            proc.kill()


def execute(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float,
            report: Path | None, shown: list[str] | None = None) -> Outcome:
    """Run ``cmd`` bounded by ``timeout``; read the JSON report it wrote (or the partial one it names)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace", stdin=subprocess.DEVNULL, start_new_session=True)
    note = ""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(proc.pid)
        out, err = proc.communicate()
        note = f"killed after {timeout:.0f} s"
    seconds = time.monotonic() - start
    (cwd / "stdout.txt").write_text(out)
    (cwd / "stderr.txt").write_text(err)
    doc = None
    if report is not None:
        path = report
        if not path.exists():  # a rank that could not join writes <report>.rankN.json and says so
            partial = sorted(path.parent.glob(path.name + ".rank*.json"))
            if partial:
                path, note = partial[0], (note + f"; only a partial report {partial[0].name}").lstrip("; ")
        if path.exists():
            with contextlib.suppress(ValueError):
                doc = json.loads(path.read_text())
    line = shlex.join(shown or cmd)
    return Outcome(line, None if note.startswith("killed") else proc.returncode, doc, seconds, note)


def cli(*args: str) -> list[str]:
    """The ``troubleshoot`` command of this interpreter."""
    return [sys.executable, "-m", "troubleshooter", *args]


def torchrun(*args: str) -> list[str]:
    """torchrun as a user types it (the one on PATH), else ``python -m torch.distributed.run``."""
    exe = shutil.which("torchrun")
    return [exe, *args] if exe else [sys.executable, "-m", "torch.distributed.run", *args]


def shown_env(env_changes: dict[str, str], cmd: list[str]) -> list[str]:
    """The command line as a user would type it: ``VAR=value [prefix] troubleshoot ...``."""
    head = cli()
    for i in range(len(cmd) - len(head) + 1):
        if cmd[i:i + len(head)] == head:
            cmd = [*cmd[:i], "troubleshoot", *cmd[i + len(head):]]
            break
    return [f"{k}={v}" for k, v in env_changes.items()] + cmd


def auto(work: Path, full: bool, env_changes: dict[str, str], probes: list[str], *extra: str,
         timeout: float = 240, netns: str | None = None) -> Outcome:
    """``troubleshoot --auto --format json`` with the fault's environment (only ``probes`` unless ``full``)."""
    work.mkdir(parents=True, exist_ok=True)
    selection = [] if full else [a for p in probes for a in ("--probe", p)]
    cmd = cli("--auto", *selection, *extra, "--format", "json", "-q", "-o", "report.json")
    prefix = ["ip", "netns", "exec", netns] if netns else []
    return execute(prefix + cmd, clean_env(**env_changes), work, timeout, work / "report.json",
                   shown=shown_env(env_changes, prefix + cmd))


def probe(work: Path, name: str, env_changes: dict[str, str], drop: tuple[str, ...] = (),
          timeout: float = 120, wrap: Callable[[list[str]], list[str]] = list) -> Outcome:
    """``troubleshoot probe NAME --format json`` with the fault's environment (``drop``: variables unset)."""
    work.mkdir(parents=True, exist_ok=True)
    env = clean_env(**env_changes)
    for var in drop:
        env.pop(var, None)
    cmd = wrap(cli("probe", name, "--format", "json", "-o", "report.json"))
    shown = [*(["env", *(f"-u{v}" for v in drop)] if drop else []), *shown_env(env_changes, cmd)]
    return execute(cmd, env, work, timeout, work / "report.json", shown=shown)


def run_job(work: Path, script: str, *, nproc: int = 2, stall: float | None = None,
            env_changes: dict[str, str] | None = None, timeout: float = 180, master_addr: str = "127.0.0.1",
            master_port: int | None = None, launch_args: tuple[str, ...] = (),
            wrap: Callable[[list[str]], list[str]] = list) -> Outcome:
    """``troubleshoot run [--stall S] -- torchrun --nproc_per_node=N [launch_args] jobs/<script>``."""
    work.mkdir(parents=True, exist_ok=True)
    env_changes = env_changes or {}
    launch = torchrun(f"--nproc_per_node={nproc}", f"--master_addr={master_addr}",
                      f"--master_port={master_port or free_port()}", *launch_args, str(JOBS / script))
    cmd = wrap(cli("run", *(["--stall", str(stall)] if stall else []), "--log-file", "job.log", "--format", "json",
                   "-o", "report.json", "--", *launch))
    return execute(cmd, clean_env(**env_changes), work, timeout, work / "report.json",
                   shown=shown_env(env_changes, cmd))


# ---------------------------------------------------------------- network namespaces

def netns_missing() -> str | None:
    """Why two-host faults cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root for ip netns"
    if not shutil.which("ip"):
        return "needs iproute2 (ip)"
    probe = f"tslfprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, timeout=20)
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=20)
    return None if made.returncode == 0 else f"ip netns add failed: {made.stderr.decode().strip()}"


def mountns_missing() -> str | None:
    """Why faults in a private mount namespace cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root for unshare -m"
    if not shutil.which("unshare"):
        return "needs util-linux (unshare)"
    made = subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=20)
    return None if made.returncode == 0 else f"unshare -m failed: {made.stderr.decode().strip()}"


def missing_prerequisite(fault: Fault) -> str | None:
    """Why ``fault`` cannot be injected on this machine, or None."""
    return (fault.netns and netns_missing()) or (fault.mountns and mountns_missing()) or None


def small_shm(cmd: list[str]) -> list[str]:
    """``cmd`` in a private mount namespace whose /dev/shm is a 1 MiB tmpfs (Docker's default is 64 MiB)."""
    return ["unshare", "-m", "sh", "-c", 'mount -t tmpfs -o size=1m tmpfs /dev/shm && exec "$@"', "sh", *cmd]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, timeout=20, capture_output=True)


@contextlib.contextmanager
def two_hosts() -> Iterator[tuple[tuple[str, str], tuple[str, str]]]:
    """Namespaces A (master, 10.78.0.1) and B (10.78.0.2) joined by a veth pair; removed afterwards.

    Same construction as tests/distributed/test_two_nodes.py (one veth end in each namespace, lo up).
    """
    tag = f"{os.getpid() % 100000}{threading.get_ident() % 100}"
    spaces, links = (f"tlfA{tag}", f"tlfB{tag}"), (f"lfa{tag}"[:15], f"lfb{tag}"[:15])

    def cleanup() -> None:
        for ns in spaces:
            subprocess.run(["ip", "netns", "del", ns], timeout=20, capture_output=True)
    cleanup()
    try:
        for ns in spaces:
            _ip("netns", "add", ns)
        _ip("link", "add", links[0], "type", "veth", "peer", "name", links[1])
        for ns, link, addr in zip(spaces, links, NETNS_ADDRS):
            _ip("link", "set", link, "netns", ns)
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", link)
            _ip("-n", ns, "link", "set", link, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield spaces, links
    finally:
        cleanup()


# ---------------------------------------------------------------- the faults

def port_in_use(work: Path, full: bool) -> Outcome:
    port = free_port()
    with socket.socket() as holder:  # another job's store still holding the port
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("0.0.0.0", port))
        holder.listen()
        return auto(work, full, {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}, ["network"])


def addr_unresolvable(work: Path, full: bool) -> Outcome:
    return auto(work, full, {"MASTER_ADDR": "trainer-master-0.invalid", "MASTER_PORT": str(free_port())},
                ["network"])


def ifname_missing(work: Path, full: bool) -> Outcome:
    return auto(work, full, {"GLOO_SOCKET_IFNAME": "bogus0"}, ["network"])


def rank_ge_world(work: Path, full: bool) -> Outcome:
    env = {"RANK": "2", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
           "MASTER_PORT": str(free_port())}
    return auto(work, full, env, ["launcher", "network"], timeout=60)  # judged before joining: no store wait


def rank_ge_world_probe(work: Path, full: bool) -> Outcome:
    return probe(work, "launcher", {"RANK": "2", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                                    "MASTER_PORT": str(free_port())})


def omp_unset_probe(work: Path, full: bool) -> Outcome:
    """A rank of an 8-rank-per-node launch (its environment as torchrun/mpirun-mapped sets it), OMP unset."""
    return probe(work, "system", {"RANK": "0", "WORLD_SIZE": "8", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "8"},
                 drop=("OMP_NUM_THREADS",))


def omp_empty_probe(work: Path, full: bool) -> Outcome:
    """As omp-unset-probe with ``OMP_NUM_THREADS=`` (empty: the OpenMP runtime ignores it, as if unset)."""
    return probe(work, "system", {"RANK": "0", "WORLD_SIZE": "8", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "8",
                                  "OMP_NUM_THREADS": ""})


def omp_unset_mpirun(work: Path, full: bool) -> Outcome:
    """mpirun -np 4 on 2 cores, OMP_NUM_THREADS unset (mpirun, unlike torchrun, never sets it).

    Each rank maps the OMPI variables to torch's, as MPI-launched DDP jobs do, so the only fault is OMP.
    """
    work.mkdir(parents=True, exist_ok=True)
    env = clean_env(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                    MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    env.pop("OMP_NUM_THREADS")
    selection = [] if full else ["--probe", "system", "--probe", "launcher", "--probe", "collective"]
    mapping = ("RANK=$OMPI_COMM_WORLD_RANK WORLD_SIZE=$OMPI_COMM_WORLD_SIZE LOCAL_RANK=$OMPI_COMM_WORLD_LOCAL_RANK "
               "LOCAL_WORLD_SIZE=$OMPI_COMM_WORLD_LOCAL_SIZE exec \"$@\"")
    mpirun = ["mpirun", "-np", "4", "--oversubscribe", "-x", "MASTER_ADDR", "-x", "MASTER_PORT", "-x", "PATH",
              "sh", "-c", mapping, "sh"]
    cmd = mpirun + cli("--auto", *selection, "--format", "json", "-q", "-o", "report.json")
    return execute(cmd, env, work, 240, work / "report.json", shown=shown_env({}, cmd))


def stuck_rank(work: Path, full: bool) -> Outcome:
    return run_job(work, "stuck_rank.py", stall=4)


def busy_rank(work: Path, full: bool) -> Outcome:
    return run_job(work, "busy_rank.py")


def sigkill_rank(work: Path, full: bool) -> Outcome:
    return run_job(work, "sigkill_rank1.py")


def segfault_rank(work: Path, full: bool) -> Outcome:
    return run_job(work, "segfault_rank1.py")


def raise_rank(work: Path, full: bool) -> Outcome:
    return run_job(work, "raise_rank1.py")


def cuda_on_cpu(work: Path, full: bool) -> Outcome:
    return run_job(work, "device_per_rank.py")


def ifname_in_job(work: Path, full: bool) -> Outcome:
    return run_job(work, "plain_ddp.py", env_changes={"GLOO_SOCKET_IFNAME": "bogus0"})


def port_in_use_job(work: Path, full: bool) -> Outcome:
    port = free_port()
    with socket.socket() as holder:
        holder.bind(("0.0.0.0", port))
        holder.listen()
        return run_job(work, "plain_ddp.py", master_port=port)


def addr_unresolvable_job(work: Path, full: bool) -> Outcome:
    """torchrun retries the lookup until its store timeout (shortened to 15 s), then fails."""
    return run_job(work, "plain_ddp.py", master_addr="trainer-master-0.invalid",
                   launch_args=("--rdzv_conf=timeout=15,read_timeout=15,join_timeout=15",))


def shm_small_probe(work: Path, full: bool) -> Outcome:
    return probe(work, "system", {}, wrap=small_shm)


def shm_small_job(work: Path, full: bool) -> Outcome:
    """DataLoader workers of a 2-rank job cannot allocate their batches in a 1 MiB /dev/shm."""
    return run_job(work, "loader_workers.py", wrap=small_shm)


def nccl_on_cpu_auto(work: Path, full: bool) -> Outcome:
    return auto(work, full, {}, ["hardware", "collective"], "--backend", "nccl")


def nccl_on_cpu_job(work: Path, full: bool) -> Outcome:
    return run_job(work, "nccl_on_cpu.py")


def netns_nothing_listens(work: Path, full: bool) -> Outcome:
    """Host B checks a master (host A) that is up but has nothing on MASTER_PORT; A itself is clean."""
    port = str(free_port())
    env = {"MASTER_ADDR": NETNS_ADDRS[0], "MASTER_PORT": port}
    with two_hosts() as (spaces, _links):
        outcome = auto(work / "hostB", full, env, ["network"], netns=spaces[1])
        outcome.control = auto(work / "hostA", full, env, ["network"], netns=spaces[0])
    return outcome


def netns_master_link_down(work: Path, full: bool) -> Outcome:
    """Host A's link is down: B's connection to the master times out; single-node on A still works."""
    port = str(free_port())
    with two_hosts() as (spaces, links):
        _ip("-n", spaces[0], "link", "set", links[0], "down")
        outcome = auto(work / "hostB", full, {"MASTER_ADDR": NETNS_ADDRS[0], "MASTER_PORT": port}, ["network"],
                       netns=spaces[1])
        outcome.control = auto(work / "hostA", full, {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port},
                               ["network"], netns=spaces[0])
    return outcome


def netns_route_prohibited(work: Path, full: bool) -> Outcome:
    """A firewall rejecting B's packets to the master (emulated by a `prohibit` route: no iptables here)."""
    port = str(free_port())
    with two_hosts() as (spaces, _links):
        _ip("-n", spaces[1], "route", "add", "prohibit", f"{NETNS_ADDRS[0]}/32")
        outcome = auto(work / "hostB", full, {"MASTER_ADDR": NETNS_ADDRS[0], "MASTER_PORT": port}, ["network"],
                       netns=spaces[1])
    return outcome


def netns_ifname_down(work: Path, full: bool) -> Outcome:
    """GLOO_SOCKET_IFNAME names host B's veth, which is down."""
    with two_hosts() as (spaces, links):
        _ip("-n", spaces[1], "link", "set", links[1], "down")
        return auto(work / "hostB", full, {"GLOO_SOCKET_IFNAME": links[1]}, ["network"], netns=spaces[1])


def netns_two_node_torchrun(work: Path, full: bool) -> Outcome:
    """torchrun --nnodes=2 on A and B with A's link down: node 0 waits for node 1 at the rendezvous."""
    port = str(free_port())
    script = str(JOBS / "plain_ddp.py")
    with two_hosts() as (spaces, links):
        _ip("-n", spaces[1], "link", "set", links[1], "down")
        runs: dict[int, Outcome] = {}

        def node(rank: int) -> None:
            sub = work / f"node{rank}"
            sub.mkdir(parents=True, exist_ok=True)
            launch = torchrun("--nnodes=2", f"--node_rank={rank}", "--nproc_per_node=1",
                              f"--master_addr={NETNS_ADDRS[0]}", f"--master_port={port}",
                              "--rdzv_conf=timeout=20,join_timeout=20", script)
            cmd = cli("run", "--log-file", "job.log", "--format", "json", "-o", "report.json", "--", *launch)
            prefix = ["ip", "netns", "exec", spaces[rank]]
            runs[rank] = execute(prefix + cmd, clean_env(), sub, 150, sub / "report.json",
                                 shown=shown_env({}, prefix + cmd))
        threads = [threading.Thread(target=node, args=(r,)) for r in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    outcome = runs[0]
    outcome.note = (outcome.note + f"; node 1: {runs[1].shown()} exit {runs[1].returncode}").lstrip("; ")
    return outcome


FAULTS: list[Fault] = [
    Fault("master-port-bound", "MASTER_PORT already bound by another process", ("master-port-in-use",),
          port_in_use),
    Fault("master-addr-unresolvable", "MASTER_ADDR names a host that does not resolve",
          ("master-addr-unresolvable",), addr_unresolvable),
    Fault("gloo-ifname-missing", "GLOO_SOCKET_IFNAME names an interface that does not exist",
          ("wrong-network-interface",), ifname_missing),
    Fault("rank-ge-world-size", "RANK=2 with WORLD_SIZE=2 in the launcher environment",
          ("rank-env-inconsistent",), rank_ge_world),
    Fault("rank-ge-world-size-probe", "RANK=2 with WORLD_SIZE=2, `troubleshoot probe launcher`",
          ("rank-env-inconsistent",), rank_ge_world_probe),
    Fault("omp-unset-probe", "8 local ranks on 2 cores with OMP_NUM_THREADS unset, `troubleshoot probe system`",
          ("cpu-oversubscribed",), omp_unset_probe),
    Fault("omp-empty-probe", "8 local ranks on 2 cores with OMP_NUM_THREADS= (empty), `troubleshoot probe system`",
          ("cpu-oversubscribed",), omp_empty_probe),
    Fault("omp-unset-mpirun", "mpirun -np 4 on 2 cores with OMP_NUM_THREADS unset", ("cpu-oversubscribed",),
          omp_unset_mpirun, slow=True),
    Fault("stuck-rank-stall", "rank 1 never joins the all_reduce (asleep); run --stall 4",
          ("collective-timeout",), stuck_rank, rank=1, slow=True),
    Fault("busy-rank-gloo-timeout", "rank 1 computes past gloo's 5 s timeout; rank 0's all_reduce times out",
          ("collective-timeout",), busy_rank, rank=1, slow=True),
    Fault("sigkill-rank1", "rank 1 killed with SIGKILL (as by the OOM killer)", ("rank-crashed", "out-of-memory"),
          sigkill_rank, rank=1, slow=True),
    Fault("segfault-rank1", "rank 1 dereferences a null pointer (SIGSEGV)", ("native-crash",), segfault_rank,
          rank=1, slow=True),
    Fault("exception-rank1", "rank 1 alone raises KeyError", ("rank-crashed",), raise_rank, rank=1, slow=True),
    Fault("cuda-device-on-cpu", "script puts the model on cuda:LOCAL_RANK; this torch has no CUDA",
          ("cuda-invalid-device",), cuda_on_cpu, slow=True),
    Fault("master-port-bound-job", "torchrun job whose --master_port another process holds",
          ("master-port-in-use",), port_in_use_job, slow=True),
    Fault("master-addr-unresolvable-job", "torchrun job whose --master_addr does not resolve (store timeout 15 s)",
          ("master-addr-unresolvable",), addr_unresolvable_job, slow=True),
    Fault("gloo-ifname-missing-job", "a torchrun job with GLOO_SOCKET_IFNAME=bogus0",
          ("wrong-network-interface",), ifname_in_job, slow=True),
    Fault("shm-small-probe", "/dev/shm is a 1 MiB tmpfs (private mount namespace), `troubleshoot probe system`",
          ("shm-too-small",), shm_small_probe, mountns=True),
    Fault("shm-small-job", "2-rank job with DataLoader workers in a 1 MiB /dev/shm", ("shm-too-small",),
          shm_small_job, mountns=True, slow=True),
    Fault("nccl-on-cpu-auto", "`--auto --backend nccl` on this GPU-less CPU-only torch", ("backend-unavailable",),
          nccl_on_cpu_auto),
    Fault("nccl-on-cpu-job", "a torchrun job initialising NCCL on this GPU-less CPU-only torch",
          ("backend-unavailable",), nccl_on_cpu_job, slow=True),
    Fault("netns-nothing-listens", "host B, master host A up but nothing on MASTER_PORT (A alone is clean)",
          ("network-unreachable", "ranks-missing-at-rendezvous"), netns_nothing_listens, netns=True),
    Fault("netns-master-link-down", "host A's link down: B cannot reach the master (A alone is clean)",
          ("network-unreachable",), netns_master_link_down, netns=True),
    Fault("netns-route-prohibited", "packets from B to the master rejected (prohibit route, as a firewall)",
          ("network-unreachable",), netns_route_prohibited, netns=True),
    Fault("netns-ifname-down", "GLOO_SOCKET_IFNAME names an interface that is down",
          ("wrong-network-interface",), netns_ifname_down, netns=True),
    Fault("netns-two-node-torchrun", "torchrun --nnodes=2, node 1's link down: node 0 waits at the rendezvous",
          ("ranks-missing-at-rendezvous", "network-unreachable"), netns_two_node_torchrun, netns=True, slow=True),
]
