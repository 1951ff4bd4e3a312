"""Network probe: MASTER_ADDR resolution, the master port, interfaces vs NCCL/GLOO_SOCKET_IFNAME, routes.

On the master host (MASTER_ADDR is one of this host's addresses) nothing listens before
``init_process_group``, so the probe checks whether MASTER_PORT can still be bound. Elsewhere
it opens a TCP connection to MASTER_ADDR:MASTER_PORT with a short timeout. When the launcher
itself hosts the store (torchrun's agent store) the port is expected to answer, so it connects.
"""

from __future__ import annotations

import errno
import socket
import threading
import time
from typing import Any

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.launchers import LOCAL_WORLD_VAR, launcher_table
from troubleshooter.core.probe import NODE, Probe, ProbeContext, ProbeResult

RESOLVE_TIMEOUT_S = 3.0
CONNECT_TIMEOUT_S = 2.0


def interfaces() -> dict[str, dict[str, Any]]:
    """name -> {up, ipv4, ipv6, mtu} for every network interface (psutil)."""
    import psutil

    stats = psutil.net_if_stats()
    result: dict[str, dict[str, Any]] = {}
    for name, addrs in psutil.net_if_addrs().items():
        st = stats.get(name)
        result[name] = {
            "up": bool(st and st.isup), "mtu": st.mtu if st else None,
            "ipv4": [a.address for a in addrs if a.family == socket.AF_INET],
            "ipv6": [a.address.split("%")[0] for a in addrs if a.family == socket.AF_INET6],
        }
    for name, st in stats.items():
        result.setdefault(name, {"up": st.isup, "mtu": st.mtu, "ipv4": [], "ipv6": []})
    return result


def nccl_ifname_match(spec: str, names: list[str]) -> list[str]:
    """Interfaces NCCL_SOCKET_IFNAME selects: comma list of prefixes, ``=`` for exact names, ``^`` to exclude."""
    exclude = spec.startswith("^")
    body = spec[1:] if exclude else spec
    exact = body.startswith("=")
    body = body[1:] if exact else body
    patterns = [p.strip() for p in body.split(",") if p.strip()]

    def hit(name: str) -> bool:
        return any(name == p if exact else name.startswith(p) for p in patterns)

    return [n for n in names if hit(n) != exclude]


def _resolve(host: str, timeout: float) -> tuple[list[str] | None, str | None]:
    """(addresses, error) for ``host``; getaddrinfo runs in a thread so a dead resolver cannot hang us."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
            box["ips"] = list(dict.fromkeys(info[4][0] for info in infos))
        except OSError as exc:
            box["error"] = f"{type(exc).__name__}: {exc}"

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return None, f"name resolution did not answer within {timeout:g} s"
    return box.get("ips"), box.get("error")


def _route_source(ip: str, port: int) -> str | None:
    """Local address the kernel picks to reach ``ip`` (UDP connect sends nothing)."""
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect((ip, port or 9))
            return s.getsockname()[0]
    except OSError:
        return None


def _connect(ip: str, port: int, timeout: float) -> tuple[str, str | None, float]:
    """(outcome, error, milliseconds): outcome is connected, refused, timeout, unreachable or error."""
    started = time.perf_counter()
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect((ip, port))
        outcome, error = "connected", None
    except ConnectionRefusedError as exc:
        outcome, error = "refused", str(exc)
    except (socket.timeout, TimeoutError) as exc:
        outcome, error = "timeout", f"no answer within {timeout:g} s ({exc or 'timed out'})"
    except OSError as exc:
        unreachable = exc.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN)
        outcome, error = ("unreachable" if unreachable else "error"), str(exc)
    return outcome, error, round((time.perf_counter() - started) * 1000, 2)


def _port_bound(port: int) -> tuple[bool, str | None]:
    """Whether binding ``port`` fails with EADDRINUSE (SO_REUSEADDR, like torch's TCPStore)."""
    for family, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        if family == socket.AF_INET6 and not socket.has_ipv6:
            continue
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                s.bind((addr, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return True, f"[{addr}]:{port}: {exc.strerror}"
            if exc.errno != errno.EADDRNOTAVAIL:  # no IPv6 on this host: not a verdict
                return False, f"[{addr}]:{port}: {exc}"
    return False, None


def port_holder(port: int) -> str | None:
    """'name (pid N): cmdline' of the process listening on ``port``, when psutil can see it."""
    import psutil

    try:
        conns = psutil.net_connections(kind="inet")
    except (psutil.Error, OSError):  # processes come and go while psutil walks /proc
        return None
    for conn in conns:
        if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN:
            if conn.pid is None:
                return "a process this user cannot see"
            try:
                proc = psutil.Process(conn.pid)
                return f"{proc.name()} (pid {conn.pid}): {' '.join(proc.cmdline())[:200]}"
            except psutil.Error:
                return f"pid {conn.pid}"
    return None


class NetworkProbe(Probe):
    """Checks that MASTER_ADDR resolves, its port is free (master) or reachable (workers), and the socket interfaces."""

    id = "network"
    title = "Network and rendezvous"
    scope = NODE
    needs = ("MASTER_ADDR",)
    timeout_s = 10.0
    order = 50
    produces = (
        FactSpec("net.interfaces", "dict", "Interface -> {up, mtu, ipv4, ipv6}"),
        FactSpec("net.master_addr", "str", "MASTER_ADDR as set"),
        FactSpec("net.master_port", "str", "MASTER_PORT as set"),
        FactSpec("net.master_resolvable", "bool", "MASTER_ADDR resolves to an address"),
        FactSpec("net.master_ips", "list", "Addresses MASTER_ADDR resolves to"),
        FactSpec("net.resolve_error", "str", "Why MASTER_ADDR did not resolve"),
        FactSpec("net.master_is_local", "bool", "MASTER_ADDR is an address of this host (this node is the master)"),
        FactSpec("net.rank", "int", "This process's rank from the launcher variables, when set"),
        FactSpec("net.port_check", "str", "What was done with MASTER_PORT: bind (master host), connect (elsewhere, "
                 "or the launcher hosts the store) or skipped (the diagnosis's own local world)"),
        FactSpec("net.master_port_in_use", "bool", "MASTER_PORT cannot be bound on the master host (EADDRINUSE)"),
        FactSpec("net.port_bind_error", "str", "The bind error seen"),
        FactSpec("net.port_holder", "str", "The process that listens on MASTER_PORT, when visible"),
        FactSpec("net.master_reachable", "bool", "A TCP connection to MASTER_ADDR:MASTER_PORT succeeded"),
        FactSpec("net.connect_outcome", "str", "connected, refused, timeout, unreachable or error"),
        FactSpec("net.connect_error", "str", "The connect error seen"),
        FactSpec("net.connect_ms", "float", "Time the connect attempt took"),
        FactSpec("net.connect_timeout_s", "float", "Connect timeout used"),
        FactSpec("net.route_interface", "str", "Interface the kernel routes traffic to the master through"),
        FactSpec("net.route_source_ip", "str", "Local address used to reach the master"),
        FactSpec("net.nccl_socket_ifname", "str", "NCCL_SOCKET_IFNAME as set"),
        FactSpec("net.nccl_ifname_matched", "list", "Interfaces NCCL_SOCKET_IFNAME selects (prefix, ^ exclude, = exact)"),
        FactSpec("net.nccl_ifname_usable", "list", "Selected interfaces that are up and have an address"),
        FactSpec("net.gloo_socket_ifname", "str", "GLOO_SOCKET_IFNAME as set"),
        FactSpec("net.gloo_ifname_missing", "list", "Names in GLOO_SOCKET_IFNAME that are no interface of this host"),
        FactSpec("net.gloo_ifname_down", "list", "Names in GLOO_SOCKET_IFNAME that are down or have no address"),
    )

    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Resolve, bind or connect, and compare the interface variables with the real interfaces."""
        env = ctx.env
        ifaces = interfaces()
        facts: dict[str, Any] = {"net.interfaces": ifaces}
        up_with_addr = [n for n, i in ifaces.items() if i["up"] and (i["ipv4"] or i["ipv6"])]
        local_ips = {ip for i in ifaces.values() for ip in i["ipv4"] + i["ipv6"]}

        ctx.phase("interfaces")
        nccl_spec = env.get("NCCL_SOCKET_IFNAME")
        if nccl_spec is not None:
            matched = nccl_ifname_match(nccl_spec, sorted(ifaces))
            facts["net.nccl_socket_ifname"] = nccl_spec
            facts["net.nccl_ifname_matched"] = matched
            facts["net.nccl_ifname_usable"] = [n for n in matched if n in up_with_addr]
        gloo_spec = env.get("GLOO_SOCKET_IFNAME")
        if gloo_spec is not None:
            names = [n.strip() for n in gloo_spec.split(",") if n.strip()]
            facts["net.gloo_socket_ifname"] = gloo_spec
            facts["net.gloo_ifname_missing"] = [n for n in names if n not in ifaces]
            facts["net.gloo_ifname_down"] = [n for n in names if n in ifaces and n not in up_with_addr]

        rank, _ = launcher_table().read(env, "rank")  # torch's RANK, else the launcher's own (rules/launchers.yaml)
        if rank is not None:
            facts["net.rank"] = rank

        addr = env.get("MASTER_ADDR")
        port_raw = env.get("MASTER_PORT")
        if port_raw is not None:
            facts["net.master_port"] = port_raw
        if not addr:
            return self.result(facts, "MASTER_ADDR not set: interfaces only", **self._table(ifaces))
        facts["net.master_addr"] = addr
        ctx.phase("resolve")
        ctx.check_cancelled()
        ips, error = _resolve(addr, float(ctx.options.get("resolve_timeout", RESOLVE_TIMEOUT_S)))
        facts["net.master_resolvable"] = bool(ips)
        if not ips:
            facts["net.resolve_error"] = error or "no address"
            return self.result(facts, f"MASTER_ADDR {addr!r} does not resolve: {facts['net.resolve_error']}",
                               **self._table(ifaces))
        facts["net.master_ips"] = ips
        is_local = any(ip in local_ips or ip.startswith("127.") or ip == "::1" for ip in ips)
        facts["net.master_is_local"] = is_local
        try:
            port = int(port_raw) if port_raw is not None else None
        except ValueError:
            port = None
        source = _route_source(ips[0], port if port and 0 < port < 65536 else 9)
        if source:
            facts["net.route_source_ip"] = source
            facts["net.route_interface"] = next((n for n, i in ifaces.items() if source in i["ipv4"] + i["ipv6"]), None)

        message = f"MASTER_ADDR {addr} -> {', '.join(ips)}"
        if port is None or not 0 < port < 65536:
            return self.result(facts, message + "; MASTER_PORT unusable, port not tested", **self._table(ifaces))
        ctx.phase("port")
        ctx.check_cancelled()
        launcher_store = env.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true"
        if LOCAL_WORLD_VAR in env:
            facts["net.port_check"] = "skipped"
            message += "; port belongs to the diagnosis's own local world"
        elif is_local and not launcher_store:
            facts["net.port_check"] = "bind"
            in_use, bind_error = _port_bound(port)
            facts["net.master_port_in_use"] = in_use
            facts["net.port_bind_error"] = bind_error
            if in_use:
                facts["net.port_holder"] = port_holder(port) or "not visible to this user"
                message += f"; port {port} already bound by {facts['net.port_holder']}"
            else:
                message += f"; port {port} free on this master host"
        else:
            facts["net.port_check"] = "connect"
            timeout = float(ctx.options.get("connect_timeout", CONNECT_TIMEOUT_S))
            outcome, conn_error, ms = _connect(ips[0], port, timeout)
            facts.update({"net.master_reachable": outcome == "connected", "net.connect_outcome": outcome,
                          "net.connect_error": conn_error, "net.connect_ms": ms, "net.connect_timeout_s": timeout})
            message += f"; TCP {ips[0]}:{port} {outcome} in {ms:.0f} ms"
        return self.result(facts, message, **self._table(ifaces))

    @staticmethod
    def _table(ifaces: dict[str, dict[str, Any]]) -> dict[str, Any]:
        rows = [[n, "up" if i["up"] else "down", ", ".join(i["ipv4"] + i["ipv6"])] for n, i in sorted(ifaces.items())]
        return {"table": rows, "table_header": ["interface", "state", "addresses"]}
