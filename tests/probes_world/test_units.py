"""Fast tests of the probes' measuring and parsing pieces, the user hooks and the checks over their facts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from troubleshooter.core import engine

from troubleshooter.run import user_code
from troubleshooter.core.engine import Observations
from troubleshooter.core.facts import Facts
from troubleshooter.core.ruleset import load_rules

ROOT = Path(__file__).resolve().parents[2]


def probe_module(name: str):
    """Import probes/<name>.py by path, the way the registry does."""
    spec = importlib.util.spec_from_file_location(f"test_probe_{name}", ROOT / "probes" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


collective = probe_module("collective")
trainstep = probe_module("trainstep")
scaling = probe_module("scaling")
placement = probe_module("placement")


def test_missing_ranks_parses_gloo_messages():
    assert collective.missing_ranks("Rank 1 failed to pass monitoredBarrier in 3000 ms") == [1]
    assert collective.missing_ranks("[/x.cpp:12] Ranks 1, 3 failed to pass monitoredBarrier in 10 ms") == [1, 3]
    assert collective.missing_ranks("Connection closed by peer") == []


def test_bus_factor_is_nccl_tests_definition():
    assert collective.bus_factor(2) == 1.0
    assert collective.bus_factor(8) == 1.75
    assert collective.bus_factor(1) == 1.0


def test_expected_busbw_matches_backend_and_transport():
    table = {"links": [{"backend": "nccl", "transport": "internode", "slow_below_gbps": 10},
                       {"backend": "gloo", "transport": "loopback"}]}
    assert collective.expected_busbw(table, "nccl", "internode") == 10.0
    assert collective.expected_busbw(table, "gloo", "loopback") is None
    assert collective.expected_busbw({}, "nccl", "intranode") is None


def test_interval_arithmetic():
    a = trainstep.union([(0, 2), (1, 3), (5, 6)])
    assert a == [(0, 3), (5, 6)]
    assert trainstep.length(a) == 4
    assert trainstep.intersect(a, [(2, 5.5)]) == 1.5
    assert trainstep.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9) == pytest.approx(9.1)


class _Range:
    def __init__(self, start, end):
        self.start, self.end = start, end


class _Event:
    def __init__(self, name, start, end, thread=1, parent=None):
        self.name, self.time_range, self.thread, self.cpu_parent = name, _Range(start, end), thread, parent
        self.device_type = "DeviceType.CPU"


def test_split_profile_exposed_communication():
    step = _Event(trainstep.STEP_MARK, 0, 100_000)  # 100 ms
    events = [step, _Event("aten::mm", 0, 60_000, parent=step),           # compute 0-60 ms
              _Event("gloo:all_reduce", 40_000, 90_000, thread=2)]        # comm 40-90 ms: 20 overlapped, 30 exposed
    split = trainstep.split_profile(events, on_gpu=False)
    assert split["compute_s"] == pytest.approx(0.06)
    assert split["comm_s"] == pytest.approx(0.05)
    assert split["overlap_s"] == pytest.approx(0.02)
    assert split["exposed_s"] == pytest.approx(0.03)
    assert split["step_s"] == pytest.approx(0.1)


def test_exponent_of_power_laws():
    assert scaling.exponent([1, 2, 4], [1.0, 2.0, 4.0]) == pytest.approx(1.0)
    assert scaling.exponent([1, 4], [1.0, 15.0]) == pytest.approx(1.953, abs=1e-3)


def test_misplaced_names_the_module_of_a_meta_parameter():
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
    model[0].bias = torch.nn.Parameter(torch.empty(2, device="meta"))
    found = placement.misplaced(model, torch.device("cpu"))
    assert found == [{"module": "0", "tensor": "bias", "kind": "parameter", "device": "meta", "expected": "cpu"}]
    assert placement.unsynced_batchnorm(model) == ["1"]


def test_resolve_errors_name_the_spec(tmp_path, monkeypatch):
    (tmp_path / "hookmod_a.py").write_text("VALUE = 3\ndef build():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(user_code.HookError, match="expected MODULE:CALLABLE"):
        user_code.resolve("hookmod_a")
    with pytest.raises(user_code.HookError, match="has no attribute 'nope'"):
        user_code.resolve("hookmod_a:nope")
    with pytest.raises(user_code.HookError, match="expected a zero-argument callable"):
        user_code.resolve("hookmod_a:VALUE")
    with pytest.raises(user_code.HookError, match="cannot import module"):
        user_code.resolve("no_such_module_xyz:build")
    with pytest.raises(user_code.HookError, match="expected a torch.nn.Module"):
        user_code.load_model({"model": "hookmod_a:build"})


def test_builtin_model_batch_and_loss():
    torch = pytest.importorskip("torch")
    loaded = user_code.load_model({})
    assert loaded.source == "builtin"
    batch = user_code.make_batch(loaded.module, {}, torch.device("cpu"))
    assert batch.samples == user_code.BUILTIN_BATCH and batch.tokens == user_code.BUILTIN_BATCH * user_code.BUILTIN_SEQ
    loss = user_code.step(loaded.module, batch)
    assert loss.dim() == 0 and loaded.module.head.weight.grad is not None
    assert user_code.load_model({}).module is not loaded.module  # a fresh copy each time


def test_data_hook_dataset_and_dict_batches(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    (tmp_path / "hookmod_b.py").write_text(
        "import torch\n"
        "def pairs():\n    return torch.utils.data.TensorDataset(torch.randn(20, 3), torch.randn(20))\n"
        "def dicts():\n    return [{'x': torch.randn(4, 3)}]\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__(); self.l = torch.nn.Linear(3, 1)\n"
        "    def forward(self, x):\n        return {'loss': self.l(x).pow(2).mean()}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from hookmod_b import M
    batch = user_code.make_batch(M(), {"data": "hookmod_b:pairs"}, torch.device("cpu"))
    assert batch.samples == user_code.BUILTIN_BATCH and batch.tokens is None and batch.args[0].shape == (8, 3)
    batch = user_code.make_batch(M(), {"data": "hookmod_b:dicts"}, torch.device("cpu"))
    assert set(batch.kwargs) == {"x"}
    assert user_code.step(M(), batch).dim() == 0
    with pytest.raises(user_code.HookError, match="example_input_array"):
        user_code.make_batch(M(), {}, torch.device("cpu"))


def test_hf_calls_are_found_by_parsing(tmp_path, monkeypatch):
    (tmp_path / "hookmod_c.py").write_text(
        "def build():\n    from transformers import AutoModel\n    return AutoModel.from_pretrained('org/tiny')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import hookmod_c  # noqa: F401  (the hook has imported it by the time the probe looks)
    hits = user_code.hf_calls("hookmod_c:build")
    assert [(h["call"], h["repo"], h["line"]) for h in hits] == [("from_pretrained", "org/tiny", 3)]
    assert user_code.hf_calls(None) == [] and "transformers" not in sys.modules


def _findings(world: dict, ranks: dict[int, dict]) -> dict[str, list]:
    obs = Observations(Facts.from_dict(world, "run"), {r: Facts.from_dict(f, "probe", r) for r, f in ranks.items()})
    return {f.id: f.evidence for f in engine.evaluate(load_rules(), obs)}


def test_checks_name_stuck_rank_from_world_facts():
    found = _findings({"world.size": 2, "world.stuck_probe": "placement", "world.stuck_ranks": [1],
                       "world.waiting_ranks": [0], "world.teardown_reason": "placement did not finish within 6 s",
                       "world.stuck_phases": {"0": "placement:agree", "1": "placement:build-model"}}, {})
    detail = found["collective-timeout"][0].detail
    assert "rank 1 did not arrive (stuck in placement:build-model)" in detail and "placement:agree" in detail
    dead = _findings({"world.stuck_probe": "placement", "world.stuck_ranks": [1], "world.dead_ranks": [1]}, {})
    assert "collective-timeout" not in dead


def test_checks_over_probe_facts():
    rank1 = {"trainstep.rank_slowdown": 3.1, "trainstep.local_p50_s": 0.06, "trainstep.rank_local_p50_s": [0.02, 0.06],
             "collective.allreduce_ok": False, "collective.allreduce_expected": 2.0, "collective.allreduce_got": 1.0,
             "collective.busbw_gbps": 2.0, "collective.expected_busbw_gbps": 10.0, "collective.busbw_bytes": 1 << 24,
             "collective.link": "nccl/internode"}
    rank0 = {"trainstep.rank_slowdown": 0.3, "trainstep.comm_exposed_fraction": 0.7, "trainstep.comm_s": 0.05,
             "trainstep.model_source": "user",
             "trainstep.compute_s": 0.02, "trainstep.overlap_s": 0.01,
             "startup.slowest_phase": "model-load", "startup.slowest_phase_s": 3.0, "startup.slowest_phase_share": 0.9,
             "startup.phase_s": {"init": 0.1, "model-load": 3.0}}
    found = _findings({"world.size": 2}, {0: rank0, 1: rank1})
    assert [e.rank for e in found["straggler-rank"]] == [1]
    assert "model-load takes 3.0 s, 90%" in found["slow-startup-phase"][0].detail
    assert "returned 1.0 instead of 2.0" in found["collective-wrong-result"][0].detail
    assert "below the 10.0 GB/s" in found["slow-collective-bandwidth"][0].detail
    assert found["communication-bound"][0].rank == 0
    quiet = _findings({"world.size": 2}, {0: {"collective.busbw_gbps": 0.6, "collective.link": "gloo/loopback",
                                              "startup.slowest_phase_s": 0.2, "startup.slowest_phase_share": 0.9}})
    assert quiet == {}
    builtin = _findings({"world.size": 2}, {0: {**rank0, "trainstep.model_source": "builtin"}})
    assert "communication-bound" not in builtin  # the built-in model's ratio says nothing about the user's job
