"""Lightning refusing a SLURM job step whose task layout is not its world, in each of its wordings.

Lightning 2.x (Trainer and Fabric) compares its own description of the world with the SLURM step it runs
in: devices against --ntasks-per-node, num_nodes against --nodes, and it refuses --ntasks without
--ntasks-per-node. Each is the same contradiction between two descriptions of the world
(rank-env-inconsistent), whether the log keeps the message's backticks or a report strips them, and
whatever the exception class (ValueError, RuntimeError, MisconfigurationException) or rank prefix."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

LAYOUTS = [
    "ValueError: You set `devices=2` in Lightning, but the number of tasks per node configured in SLURM"
    " `--ntasks-per-node=1` does not match. HINT: Set `devices=1`.",
    "ValueError: You set devices=4 in Lightning, but the number of tasks per node configured in SLURM"
    " --ntasks-per-node=1 does not match",
    "0: ValueError: You set `num_nodes=2` in Lightning, but the number of nodes configured in SLURM `--nodes=1`"
    " does not match. HINT: Set `num_nodes=1`.",
    "[rank: 0] RuntimeError: You set `--ntasks=8` in your SLURM bash script, but this variable is not supported."
    " HINT: Use `--ntasks-per-node=8` instead.",
]


@pytest.mark.parametrize("text", LAYOUTS)
def test_a_slurm_layout_lightning_refuses_is_an_inconsistent_rank_environment(rules, text):
    root, shown = root_and_shown(rules, text)
    assert (root, shown[:1]) == ("rank-env-inconsistent", ["rank-env-inconsistent"])


def test_lightnings_hint_to_use_srun_is_no_failure(rules):
    text = ("/usr/lib/python3.10/site-packages/lightning/fabric/plugins/environments/slurm.py:204: The `srun` command"
            " is available on your system but is not used. HINT: If your intention is to run Lightning on SLURM,"
            " prepend your python command with `srun` like so: srun python train.py ...")
    _root, shown = root_and_shown(rules, text)
    assert shown == []
