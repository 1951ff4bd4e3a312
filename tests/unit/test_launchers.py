"""The launcher table (rules/launchers.yaml): one reading of a launcher's environment for --auto, the TUI and probes."""

from __future__ import annotations

import pytest

from troubleshooter.core.errors import RuleFileError
from troubleshooter.core.launchers import launcher_table, load_table, per_node_count, under_launcher
from troubleshooter.tui.environment import launcher_summary

ENVS = {
    "sbatch shell": ({"SLURM_JOB_ID": "77", "SLURM_JOB_NODELIST": "n1"}, None),
    "sbatch batch step": ({"SLURM_JOB_ID": "77", "SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_LOCALID": "0"},
                          None),
    "srun task": ({"SLURM_JOB_ID": "77", "SLURM_STEP_ID": "0", "SLURM_PROCID": "1", "SLURM_NTASKS": "2"}, "slurm"),
    "torchrun": ({"RANK": "0", "WORLD_SIZE": "2", "TORCHELASTIC_RUN_ID": "x"}, "torchrun"),
    "mpirun": ({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}, "openmpi"),
    "hydra": ({"PMI_RANK": "0", "PMI_SIZE": "2"}, "mpich"),
    "mvapich2": ({"MV2_COMM_WORLD_RANK": "0", "MV2_COMM_WORLD_SIZE": "2"}, "mvapich2"),
    "deepspeed": ({"RANK": "0", "WORLD_SIZE": "2", "CROSS_RANK": "0", "CROSS_SIZE": "1"}, "deepspeed"),
    "by hand": ({"RANK": "0", "WORLD_SIZE": "2"}, "manual"),
    "local rank only": ({"LOCAL_RANK": "0"}, None),
    "own local world": ({"TROUBLESHOOTER_LOCAL_WORLD": "1", "RANK": "0", "WORLD_SIZE": "2"}, None),
    "plain shell": ({}, None),
}


@pytest.mark.parametrize("name", sorted(ENVS))
def test_tui_and_auto_agree_on_the_launcher(name):
    env, expected = ENVS[name]
    launch = launcher_table().launch(env)
    assert (launch[0] if launch else None) == expected
    assert under_launcher(env) == (expected is not None)
    shown = launcher_summary(env, 2, "auto")["launcher"]
    assert shown.startswith("none (local world") == (expected is None), shown


def test_sbatch_allocation_is_named_but_is_not_a_launcher():
    shown = launcher_summary({"SLURM_JOB_ID": "77"}, 4, "auto")
    assert shown == {**shown, "launcher": "none (local world; inside a slurm allocation)", "world size": "4 (--nproc)"}


def test_every_listed_launcher_is_in_the_table():
    ids = {l.id for l in launcher_table().launchers}
    assert {"torchrun", "deepspeed", "accelerate", "openmpi", "mvapich2", "mpich", "slurm", "manual", "local"} <= ids
    assert all(l.process for l in launcher_table().launchers if l.id in ("torchrun", "deepspeed", "accelerate",
                                                                         "openmpi", "slurm"))


def test_rank_variables_torch_first_then_each_launcher():
    table = launcher_table()
    assert table.variables("rank")[0] == "RANK" and "SLURM_PROCID" in table.variables("rank")
    assert table.read({"OMPI_COMM_WORLD_LOCAL_RANK": "3"}, "local_rank") == (3, "OMPI_COMM_WORLD_LOCAL_RANK")
    assert table.read({"SLURM_TASKS_PER_NODE": "2(x2),1", "SLURM_NODEID": "2"}, "local_world_size",
                      node_rank=2) == (1, "SLURM_TASKS_PER_NODE")


def test_per_node_lists():
    assert per_node_count("4", None) == 4
    assert per_node_count("2(x3),1", 3) == 1
    assert per_node_count("2(x3),1", None) is None
    assert per_node_count("two", 0) is None


def test_overlay_replaces_a_launcher_and_broken_table_names_file_and_line(tmp_path):
    (tmp_path / "launchers.yaml").write_text("launchers:\n  - id: torchrun\n    markers: [MY_AGENT_ID]\n    sets: []\n")
    table = load_table([tmp_path])
    assert table.launchers[0].id == "torchrun" and table.launchers[0].markers == ("MY_AGENT_ID",)
    assert len([l for l in table.launchers if l.id == "torchrun"]) == 1
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "launchers.yaml").write_text("launchers:\n  - id: x\n    markers: [A]\n    process: '(['\n")
    with pytest.raises(RuleFileError) as err:
        load_table([broken])
    assert f"{broken / 'launchers.yaml'}:4" in err.value.message


def test_rules_check_validates_the_launcher_table(tmp_path, capsys):
    from troubleshooter.cli import main

    (tmp_path / "launchers.yaml").write_text("launchers:\n  - id: x\n    markers: A\n")
    assert main(["rules", "check", str(tmp_path)]) == 2
    assert f"{tmp_path / 'launchers.yaml'}:3" in capsys.readouterr().err


def test_all_variables_names_every_variable_of_the_table() -> None:
    """Tests clean their environment with this set instead of keeping their own lists."""
    table = launcher_table()
    names = table.all_variables()
    assert {"RANK", "LOCAL_RANK", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
            "SLURM_PROCID", "SLURM_JOB_ID", "TROUBLESHOOTER_LOCAL_WORLD"} <= names
    for launcher in table.launchers:
        assert set(launcher.markers) | set(launcher.sets) <= names
        assert all(set(group) <= names for group in launcher.fields.values())
