"""Two "nodes" on one machine: network + UTS namespaces joined by a veth pair, torchrun --nnodes=2 in each."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from .conftest import QUICK, clean_env, finding_ids, free_port, load

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("unshare"),
    reason="needs root, iproute2 and unshare to build network namespaces")]
ADDRS = ("10.77.0.1", "10.77.0.2")


def sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, timeout=20, capture_output=True)


@pytest.fixture
def two_nodes(request):
    """Namespaces ``tsA<pid>``/``tsB<pid>`` with veth ends ``tva<pid>``/``tvb<pid>`` on 10.77.0.1/.2."""
    tag = str(os.getpid())[-5:]
    spaces, links = (f"tsA{tag}", f"tsB{tag}"), (f"tva{tag}", f"tvb{tag}")

    def cleanup() -> None:
        for ns in spaces:
            subprocess.run(["ip", "netns", "del", ns], timeout=20, capture_output=True)
    request.addfinalizer(cleanup)
    cleanup()
    for ns in spaces:
        sh("ip", "netns", "add", ns)
    sh("ip", "link", "add", links[0], "type", "veth", "peer", "name", links[1])
    for ns, link, addr in zip(spaces, links, ADDRS):
        sh("ip", "link", "set", link, "netns", ns)
        sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", link)
        sh("ip", "-n", ns, "link", "set", link, "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    return spaces, links


def launch(two_nodes, tmp_path, gloo_ifnames, timeout_s: str = "30") -> list[subprocess.CompletedProcess]:
    """torchrun on both nodes at once (hostnames node0/node1), each bounded; returns both outcomes."""
    spaces, _ = two_nodes
    port = free_port()
    procs = []
    for node, (ns, ifname) in enumerate(zip(spaces, gloo_ifnames)):
        workdir = tmp_path / f"node{node}"
        workdir.mkdir()
        cmd = ["ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c", f'hostname node{node} && exec "$@"', "sh",
               sys.executable, "-m", "torch.distributed.run", "--nnodes=2", f"--node_rank={node}",
               "--nproc_per_node=1", f"--master_addr={ADDRS[0]}", f"--master_port={port}",
               "--rdzv_conf=timeout=60", "-m", "troubleshooter", "--auto", "--format", "json", "-q", "-o", "r.json",
               *QUICK, "--timeout", timeout_s]
        procs.append(subprocess.Popen(cmd, cwd=workdir, env=clean_env(GLOO_SOCKET_IFNAME=ifname),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      start_new_session=True))
    outcomes = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=200)
            outcomes.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.communicate()
    return outcomes


def test_one_report_covers_both_nodes(two_nodes, tmp_path):
    outcomes = launch(two_nodes, tmp_path, two_nodes[1])
    doc = load(tmp_path / "node0" / "r.json")
    assert doc["world"]["nodes"] == 2 and doc["world"]["size"] == 2, outcomes[0].stderr[-2000:]
    assert [(r["rank"], r["host"]) for r in doc["rank_table"]] == [(0, "node0"), (1, "node1")]
    assert [n["host"] for n in doc["nodes"]] == ["node0", "node1"]
    assert all(set(n["node_probes"]) == {"system", "network"} for n in doc["nodes"])
    collective = {p["rank"]: p for p in doc["probes"] if p["name"] == "collective"}
    assert collective[0]["facts"]["collective.allreduce_ok"] is True
    assert collective[0]["facts"]["collective.link"] == "gloo/tcp"
    assert not (tmp_path / "node1" / "r.json").exists()  # only rank 0 writes


def test_broken_gloo_interface_on_one_node_is_named(two_nodes, tmp_path):
    outcomes = launch(two_nodes, tmp_path, (two_nodes[1][0], "bogus0"), timeout_s="20")
    doc = load(tmp_path / "node0" / "r.json")
    assert "wrong-network-interface" in finding_ids(doc), outcomes[0].stderr[-2000:]
    finding = next(f for f in doc["findings"] if f["id"] == "wrong-network-interface")
    assert {e["rank"] for e in finding["evidence"]} == {1}
    assert any("bogus0" in e["detail"] for e in finding["evidence"])
