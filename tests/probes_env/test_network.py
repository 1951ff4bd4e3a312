"""Network probe: a bound port, a name that does not resolve, absent/down interfaces, and two real hosts (netns)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import uuid

import pytest

from troubleshooter.run.local_world import free_port

from .conftest import ENV_FINDINGS, clean_env, findings_by_id, probe_facts, run_cli


def test_nccl_ifname_syntax(registry):
    match = sys.modules[registry.get("network").__module__].nccl_ifname_match
    names = ["docker0", "eth0", "eth1", "ib0", "lo"]
    assert match("eth", names) == ["eth0", "eth1"]
    assert match("^lo,docker", names) == ["eth0", "eth1", "ib0"]
    assert match("=eth", names) == []
    assert match("=eth1", names) == ["eth1"]
    assert match("^=eth0", names) == ["docker0", "eth1", "ib0", "lo"]


def test_healthy_loopback_master_no_finding():
    report = run_cli("network", clean_env(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port())))
    facts = probe_facts(report, "network")
    assert facts["net.master_is_local"] is True and facts["net.port_check"] == "bind"
    assert facts["net.master_port_in_use"] is False
    assert facts["net.route_interface"] == "lo"
    assert not set(findings_by_id(report)) & set(ENV_FINDINGS)


def test_no_master_addr_is_quiet():
    report = run_cli("network", clean_env())
    assert "net.master_resolvable" not in probe_facts(report, "network")
    assert not set(findings_by_id(report)) & set(ENV_FINDINGS)


def test_master_port_in_use_names_the_holder():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        report = run_cli("network", clean_env(MASTER_ADDR="localhost", MASTER_PORT=str(port)))
    finding = findings_by_id(report)["master-port-in-use"]
    detail = finding["evidence"][0]["detail"]
    assert f"MASTER_PORT {port} is already bound on this master host by" in detail
    assert f"(pid {os.getpid()})" in detail


def test_master_addr_does_not_resolve():
    report = run_cli("network", clean_env(MASTER_ADDR="no-such-master.invalid", MASTER_PORT="29500"))
    finding = findings_by_id(report)["master-addr-unresolvable"]
    assert finding["evidence"][0]["detail"].startswith("MASTER_ADDR=no-such-master.invalid does not resolve: ")
    assert probe_facts(report, "network")["net.master_resolvable"] is False


@pytest.mark.parametrize("variable,value,detail", [
    ("NCCL_SOCKET_IFNAME", "nosuch", "NCCL_SOCKET_IFNAME=nosuch selects no interface of this host"),
    ("NCCL_SOCKET_IFNAME", "=nosuch0", "NCCL_SOCKET_IFNAME==nosuch0 selects no interface of this host"),
    ("GLOO_SOCKET_IFNAME", "nosuch0", "GLOO_SOCKET_IFNAME=nosuch0: no interface named nosuch0 on this host"),
    ("GLOO_SOCKET_IFNAME", "^lo", "GLOO_SOCKET_IFNAME=^lo: no interface named ^lo on this host"),
])
def test_interface_that_does_not_exist(variable, value, detail, probe_and_judge):
    _, findings = probe_and_judge("network", clean_env(**{variable: value}))
    assert findings["wrong-network-interface"].evidence[0].detail == detail


def test_exclusion_that_excludes_everything(probe_and_judge, registry):
    names = sorted(sys.modules[registry.get("network").__module__].interfaces())
    prefixes = ",".join(sorted({n[:2] for n in names}))
    _, findings = probe_and_judge("network", clean_env(NCCL_SOCKET_IFNAME=f"^{prefixes}"))
    assert "selects no interface of this host" in findings["wrong-network-interface"].evidence[0].detail


def test_valid_interface_names_are_quiet(probe_and_judge):
    _, findings = probe_and_judge("network", clean_env(NCCL_SOCKET_IFNAME="lo", GLOO_SOCKET_IFNAME="lo"))
    assert "wrong-network-interface" not in findings


# ---- two hosts: network namespaces joined by a veth pair -----------------------------------------

def _have_netns() -> bool:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return False
    name = f"tsprobe{uuid.uuid4().hex[:6]}"
    ok = subprocess.run(["ip", "netns", "add", name], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return ok


LISTENER = """
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(16)
print("ready", flush=True)
s.settimeout(1.0)
deadline = time.time() + 300
while time.time() < deadline:
    try:
        s.accept()[0].close()
    except OSError:
        pass
"""


@pytest.fixture
def two_hosts(request):
    """Namespaces master (10.231.7.1) and worker (10.231.7.2) on a veth pair, a listener on the master."""
    if not _have_netns():
        pytest.skip("needs root and `ip netns`")
    tag = uuid.uuid4().hex[:6]
    master, worker = f"tsm{tag}", f"tsw{tag}"
    listener: list[subprocess.Popen] = []

    def sh(*cmd: str) -> None:
        subprocess.run(cmd, check=True, capture_output=True, timeout=20)

    def cleanup() -> None:
        for proc in listener:
            proc.kill()
            proc.wait(timeout=10)
        for ns in (master, worker):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)

    request.addfinalizer(cleanup)
    sh("ip", "netns", "add", master)
    sh("ip", "netns", "add", worker)
    sh("ip", "link", "add", f"vm{tag}", "netns", master, "type", "veth", "peer", "name", f"vw{tag}", "netns", worker)
    for ns, dev, ip in ((master, f"vm{tag}", "10.231.7.1/24"), (worker, f"vw{tag}", "10.231.7.2/24")):
        sh("ip", "-n", ns, "addr", "add", ip, "dev", dev)
        sh("ip", "-n", ns, "link", "set", dev, "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    port = 29611
    proc = subprocess.Popen(["ip", "netns", "exec", master, sys.executable, "-c", LISTENER, "10.231.7.1", str(port)],
                            stdout=subprocess.PIPE, text=True)
    listener.append(proc)
    assert proc.stdout.readline().strip() == "ready"
    return {"master": master, "worker": worker, "port": port, "worker_dev": f"vw{tag}", "tag": tag}


def in_ns(ns: str, **env: str) -> dict:
    """The network probe's report from inside namespace ``ns``."""
    return run_cli("network", clean_env(**env), prefix=("ip", "netns", "exec", ns))


@pytest.mark.netns
def test_worker_reaches_master_then_not(two_hosts):
    h = two_hosts
    good = in_ns(h["worker"], MASTER_ADDR="10.231.7.1", MASTER_PORT=str(h["port"]), RANK="1")
    facts = probe_facts(good, "network")
    assert facts["net.master_is_local"] is False and facts["net.port_check"] == "connect"
    assert facts["net.master_reachable"] is True and facts["net.connect_outcome"] == "connected"
    assert facts["net.route_interface"] == h["worker_dev"] and facts["net.route_source_ip"] == "10.231.7.2"
    assert not set(findings_by_id(good)) & set(ENV_FINDINGS)

    bad = in_ns(h["worker"], MASTER_ADDR="10.231.7.99", MASTER_PORT=str(h["port"]), RANK="1")
    finding = findings_by_id(bad)["network-unreachable"]
    assert finding["severity"] == "error"
    assert probe_facts(bad, "network")["net.master_reachable"] is False
    detail = finding["evidence"][0]["detail"]
    assert detail.startswith(f"TCP to 10.231.7.99:{h['port']} (10.231.7.99): ") and h["worker_dev"] in detail

    closed = in_ns(h["worker"], MASTER_ADDR="10.231.7.1", MASTER_PORT=str(h["port"] + 1), RANK="1")
    refused = findings_by_id(closed)["network-unreachable"]
    assert refused["severity"] == "warning"
    assert f"refused the connection on port {h['port'] + 1}" in refused["evidence"][0]["detail"]


@pytest.mark.netns
def test_master_host_sees_its_port_taken(two_hosts):
    h = two_hosts
    report = in_ns(h["master"], MASTER_ADDR="10.231.7.1", MASTER_PORT=str(h["port"]), RANK="0")
    assert probe_facts(report, "network")["net.port_check"] == "bind"
    detail = findings_by_id(report)["master-port-in-use"]["evidence"][0]["detail"]
    assert f"MASTER_PORT {h['port']} is already bound on this master host by python" in detail


@pytest.mark.netns
def test_down_interface_named_for_gloo(two_hosts):
    """A fresh namespace's extra interface that is down: gloo cannot bind to it."""
    h = two_hosts
    dev = f"tsd{h['tag']}"
    subprocess.run(["ip", "-n", h["worker"], "link", "add", dev, "type", "veth", "peer", "name", f"{dev}p"],
                   check=True, timeout=20)
    report = in_ns(h["worker"], GLOO_SOCKET_IFNAME=dev, NCCL_SOCKET_IFNAME=f"={dev}")  # exact: not the peer {dev}p
    evidence = [e["detail"] for e in findings_by_id(report)["wrong-network-interface"]["evidence"]]
    assert f"GLOO_SOCKET_IFNAME={dev}: {dev} is down or has no address" in evidence
    assert f"NCCL_SOCKET_IFNAME=={dev} selects only {dev}, none of them up with an address" in evidence
