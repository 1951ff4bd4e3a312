"""free_port: a master port the kernel cannot hand to someone else's connection before the store binds it."""

from __future__ import annotations

import socket

import pytest

from troubleshooter.run import local_world


def test_port_is_drawn_below_the_ephemeral_range_and_is_bindable() -> None:
    low = local_world._ephemeral_low()
    if low <= 1024 + local_world.PORT_SPAN:
        pytest.skip("no ephemeral port range known here")
    ports = {local_world.free_port() for _ in range(20)}
    assert all(low - local_world.PORT_SPAN <= p < low for p in ports), sorted(ports)
    assert len(ports) > 1  # drawn at random, so two concurrent choosers rarely meet
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports.pop()))


def test_a_port_in_use_is_never_returned(monkeypatch) -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    taken = holder.getsockname()[1]
    draws = iter([taken, taken])  # the first two draws hit the port in use
    monkeypatch.setattr(local_world, "_ephemeral_low", lambda: 40_000)
    monkeypatch.setattr(local_world.random, "randrange", lambda a, b: next(draws, 30_123))
    try:
        assert local_world.free_port() != taken
    finally:
        holder.close()


def test_without_a_known_range_the_kernel_chooses(monkeypatch) -> None:
    monkeypatch.setattr(local_world, "_ephemeral_low", lambda: 0)
    port = local_world.free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
