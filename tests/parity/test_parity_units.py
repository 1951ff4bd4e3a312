"""Fast tests of the parity probe's pieces: selection with --model, batches, groups, sharding, the one-process view."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from troubleshooter.core.registry import Registry
from troubleshooter.run.options import RunOptions
from troubleshooter.run.plan import make_plan

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("test_probe_parity", ROOT / "probes" / "parity.py")
parity = importlib.util.module_from_spec(spec)
spec.loader.exec_module(parity)


def test_parity_runs_by_default_only_with_a_model():
    registry = Registry.load([], entry_points=False)
    without = [p.id for p in make_plan(registry, RunOptions()).ranked]
    with_model = [p.id for p in make_plan(registry, RunOptions(model="pkg.mod:build")).ranked]
    skipped = [p.id for p in make_plan(registry, RunOptions(model="pkg.mod:build", skip=("parity",))).ranked]
    assert "parity" not in without and "parity" in with_model and "parity" not in skipped


def test_groups_put_equal_ranks_together_largest_first():
    assert parity.groups(["a", "b", "a", "a"]) == [[0, 2, 3], [1]]
    assert parity.groups(["x", "y"]) == [[0], [1]]


def test_perturbed_batch_is_different_but_valid():
    torch = pytest.importorskip("torch")
    from troubleshooter.run.user_code import Batch

    ids = torch.arange(24).reshape(4, 6)
    batch = Batch((torch.ones(4, 3), ids), {"mask": torch.ones(4, 6, dtype=torch.bool)}, 4, None)
    one, two, again = parity.perturbed(batch, 1), parity.perturbed(batch, 2), parity.perturbed(batch, 1)
    assert not torch.equal(one.args[0], batch.args[0]) and not torch.equal(one.args[0], two.args[0])
    assert torch.equal(one.args[0], again.args[0])  # rank 0 can rebuild every rank's batch
    assert sorted(one.args[1].reshape(-1).tolist()) == list(range(24))  # token ids stay valid ids
    assert torch.equal(one.kwargs["mask"], batch.kwargs["mask"])
    whole = parity.concatenated([one, two])
    assert whole.samples == 8 and whole.args[0].shape == (8, 3) and whole.kwargs["mask"].shape == (8, 6)


def test_drawn_indices_flatten_batch_samplers():
    assert parity.drawn_indices([[3, 1], [2]]) == [3, 1, 2]
    assert parity.drawn_indices(iter([5, 4])) == [5, 4]


def test_single_process_view_restores_everything():
    dist = pytest.importorskip("torch.distributed")
    before = (dist.is_initialized, dist.get_world_size, os.environ.get("WORLD_SIZE"))
    with parity.single_process_view():
        assert dist.is_initialized() is False and dist.get_world_size() == 1 and os.environ["WORLD_SIZE"] == "1"
    assert (dist.is_initialized, dist.get_world_size, os.environ.get("WORLD_SIZE")) == before


def test_digest_tells_tensors_apart():
    torch = pytest.importorskip("torch")
    x = torch.arange(10.0)
    assert parity.digest(x) == parity.digest(x.clone())
    assert parity.digest(x) != parity.digest(x.flip(0))  # same sum, different positions
    assert parity.digest(torch.tensor(3)) == parity.digest(torch.tensor(3))


def test_may_differ_patterns_come_from_the_loaded_rules_with_their_overlays(tmp_path):
    """The probe reads parity.may_differ through the one knowledge loader: the run's --rules overlays add to it."""
    from types import SimpleNamespace

    (tmp_path / "expectations.yaml").write_text("parity:\n  may_differ: ['*site_counter']\n")
    model = SimpleNamespace(parity_may_differ=["input_ema"])
    shipped = parity.may_differ_patterns(model, {"rules": []})
    overlaid = parity.may_differ_patterns(model, RunOptions(rules_dirs=(str(tmp_path),)).probe_options())
    assert "input_ema" in shipped and "*num_batches_tracked" in shipped and "*site_counter" not in shipped
    assert set(shipped) < set(overlaid) and "*site_counter" in overlaid
