"""Helpers for the environment probes' tests: a clean environment, the CLI, and probe + engine in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Mapping

import pytest

from troubleshooter.core.engine import Observations, evaluate
from troubleshooter.core.facts import Facts
from troubleshooter.core.launchers import launcher_table
from troubleshooter.core.probe import RANK, ProbeContext, ProbeResult, run_probe
from troubleshooter.core.registry import Registry
from troubleshooter.core.ruleset import load_rules

# Variables that would make a test depend on the shell it runs in: every launcher variable
# (rules/launchers.yaml) and these, which change networking, threading and devices.
NOISY_PREFIXES = ("NCCL_", "GLOO_", "ACCELERATE_", "PL_")
NOISY_VARS = {"OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES"}
ENV_FINDINGS = ("launcher-env-missing", "rank-env-inconsistent", "shm-too-small", "cpu-oversubscribed",
                "tool-missing", "hostfile-missing", "local-rank-exceeds-devices", "precision-unsupported",
                "backend-unavailable", "master-addr-unresolvable", "network-unreachable", "master-port-in-use",
                "wrong-network-interface")


def clean_env(**overrides: str) -> dict[str, str]:
    """os.environ without launcher/network/threading variables, plus ``overrides``."""
    noisy = launcher_table().all_variables() | NOISY_VARS
    env = {k: v for k, v in os.environ.items() if k not in noisy and not k.startswith(NOISY_PREFIXES)}
    env.update(overrides)
    return env


def run_cli(name: str, env: Mapping[str, str], *args: str, prefix: tuple[str, ...] = (),
            timeout: float = 120) -> dict[str, Any]:
    """``[prefix...] python -m troubleshooter probe NAME --format json``; the parsed report."""
    cmd = [*prefix, sys.executable, "-m", "troubleshooter", "probe", name, "--format", "json", *args]
    proc = subprocess.run(cmd, env=dict(env), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode in (0, 1), f"exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


def findings_by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Report findings keyed by id."""
    return {f["id"]: f for f in report["findings"]}


def probe_facts(report: dict[str, Any], name: str) -> dict[str, Any]:
    """Facts of probe ``name`` in a report (first result)."""
    return next(p for p in report["probes"] if p["name"] == name)["facts"]


@pytest.fixture(scope="session")
def registry() -> Registry:
    """The shipped probes."""
    return Registry.load(entry_points=False)


@pytest.fixture(scope="session")
def rules():
    """The shipped rules."""
    return load_rules()


@pytest.fixture
def probe_and_judge(registry, rules):
    """Run probe ``name`` in-process on ``env``/``options``; return (result, {finding id: finding})."""

    def run(name: str, env: Mapping[str, str], options: Mapping[str, Any] | None = None) -> tuple[ProbeResult, dict]:
        probe = registry.get(name)()
        result = run_probe(probe, ProbeContext(env=dict(env), options=dict(options or {})))
        assert result.status == "ok", result.message
        assert not result.details.get("contract_violations"), result.details["contract_violations"]
        facts = Facts.from_dict(result.facts, name, 0 if probe.scope == RANK else None)
        obs = Observations(ranks={0: facts}) if probe.scope == RANK else Observations(facts=facts)
        return result, {f.id: f for f in evaluate(rules, obs)}

    return run
