"""Deliver every rank's results to rank 0 through a TCPStore the diagnosis controls.

Rank 0's supervisor hosts the store on MASTER_PORT+1, apart from the process group, so results
arrive even when the process group never forms or NCCL is broken. Every operation is bounded
by a timeout. Keys: ``hello/<rank>`` (add: >1 means two processes claim the rank),
``joined/<n>`` (the n-th process to check in, so rank 0 also sees out-of-range ranks),
``result/<rank>`` (the rank's JSON payload).
"""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from typing import Any

POLL_S = 0.2
CONNECT_GRACE_S = 30.0  # a loaded machine can overrun the store's own connect timeout; never exit inside it


class ExchangeError(Exception):
    """The store could not be hosted or reached."""


class Exchange:
    """One rank's handle on the result store (rank 0 hosts it, the others connect in the background)."""

    def __init__(self, addr: str, port: int, rank: int, timeout_s: float):
        self.addr, self.port, self.rank, self.timeout_s = addr, port, rank, timeout_s
        self.store = None
        self.error: str | None = None
        self._connected = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Host the store (rank 0, immediately) or start connecting to it (others, in a thread)."""
        if self.rank == 0:
            self._connect(is_master=True)
        else:
            self._thread = threading.Thread(target=self._connect, kwargs={"is_master": False}, daemon=True)
            self._thread.start()

    def _connect(self, is_master: bool) -> None:
        from torch.distributed import TCPStore

        try:
            self.store = TCPStore(self.addr, self.port, None, is_master, timedelta(seconds=self.timeout_s),
                                  wait_for_workers=False)
            count = self.store.add(f"hello/{self.rank}", 1)
            index = self.store.add("joined", 1)
            self.store.set(f"joined/{index}", json.dumps({"rank": self.rank, "claims": count}))
        except Exception as exc:  # DistNetworkError, RuntimeError, OSError: all mean "not reached"
            where = "host" if is_master else "reach"
            self.error = f"could not {where} the diagnosis store at {self.addr}:{self.port}: " \
                         f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
            self.store = None
        finally:
            self._connected.set()

    def wait_connected(self, timeout_s: float) -> bool:
        """True once connected; False when connecting failed or is still going after ``timeout_s``."""
        self._connected.wait(timeout_s)
        return self.store is not None

    def publish(self, payload: dict[str, Any]) -> None:
        """Hand this rank's payload to rank 0; ExchangeError when that is impossible.

        Waits for the connecting thread to end (the store's timeout bounds it): a process that exits
        while that thread is still inside the store's native code can abort (SIGABRT).
        """
        if not self.wait_connected(self.timeout_s + CONNECT_GRACE_S):
            raise ExchangeError(self.error or f"still connecting to {self.addr}:{self.port} after {self.timeout_s:g} s")
        try:
            self.store.set(f"result/{self.rank}", json.dumps(payload, default=str))
        except Exception as exc:
            raise ExchangeError(f"could not send results to rank 0 at {self.addr}:{self.port}: {exc}") from exc

    def joined(self) -> dict[int, int]:
        """Rank -> number of processes that checked in claiming it (rank 0 only)."""
        claims: dict[int, int] = {}
        total = self.store.add("joined", 0)
        for index in range(1, total + 1):
            entry = json.loads(self.store.get(f"joined/{index}"))
            claims[entry["rank"]] = max(claims.get(entry["rank"], 0), entry["claims"])
        return claims

    def collect(self, world_size: int, join_deadline: float, result_deadline: float,
                have: dict[int, dict] | None = None) -> tuple[dict[int, dict], dict[int, int]]:
        """(payloads by rank, join claims) once every joined rank delivered, or at the deadlines (monotonic).

        Ranks that have not checked in by ``join_deadline`` are given up on; ranks that checked
        in get until ``result_deadline``.
        """
        payloads = dict(have or {})
        while True:
            claims = self.joined()
            for rank in claims:
                if rank not in payloads and self.store.check([f"result/{rank}"]):
                    payloads[rank] = json.loads(self.store.get(f"result/{rank}"))
            expected = set(range(world_size)) | set(claims)
            now = time.monotonic()
            waiting_join = expected - set(claims) if now < join_deadline else set()
            waiting_result = {r for r in claims if r not in payloads} if now < result_deadline else set()
            if not waiting_join and not waiting_result:
                return payloads, claims
            time.sleep(POLL_S)
