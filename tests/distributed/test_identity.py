"""Deriving rank identity and the master endpoint from launcher variables."""

from __future__ import annotations

import pytest

from troubleshooter.distributed.identity import derive, first_host
from troubleshooter.core.errors import UsageError
from troubleshooter.core.registry import Registry


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.load()


@pytest.mark.parametrize("nodelist, first", [("gpu[07-09,12],cpu1", "gpu07"), ("node1,node2", "node1"),
                                             ("a-b[3]", "a-b3"), ("solo", "solo"), ("", None)])
def test_first_host_of_slurm_nodelist(nodelist, first):
    assert first_host(nodelist) == first


def test_openmpi_on_one_node_gets_loopback_and_default_port(registry):
    env = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
           "OMPI_COMM_WORLD_LOCAL_SIZE": "2"}
    ident = derive(env, registry)
    assert (ident.rank, ident.world_size, ident.local_rank, ident.local_world_size) == (1, 2, 1, 2)
    assert (ident.master_addr, ident.master_port, ident.launcher) == ("127.0.0.1", 29500, "mpirun")
    assert set(ident.derived) == {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}
    assert ident.torch_env()["RANK"] == "1"


def test_openmpi_across_nodes_without_master_addr_is_a_clear_error(registry):
    env = {"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "3",
           "OMPI_COMM_WORLD_LOCAL_SIZE": "4"}
    with pytest.raises(UsageError, match="MASTER_ADDR"):
        derive(env, registry)


def test_srun_task_takes_master_from_the_step_nodelist_and_port_from_the_job_id(registry):
    env = {"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1", "SLURM_NODEID": "1",
           "SLURM_STEP_ID": "0", "SLURM_JOB_ID": "123456", "SLURM_STEP_NODELIST": "dgx[03-04]",
           "SLURM_TASKS_PER_NODE": "4(x2)"}
    ident = derive(env, registry)
    assert (ident.rank, ident.world_size, ident.local_rank, ident.local_world_size) == (5, 8, 1, 4)
    assert (ident.master_addr, ident.master_port, ident.launcher) == ("dgx03", 23456, "slurm")


def test_torchrun_variables_are_taken_as_they_are(registry):
    env = {"RANK": "2", "WORLD_SIZE": "4", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "1",
           "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29400", "TORCHELASTIC_RUN_ID": "x"}
    ident = derive(env, registry)
    assert (ident.master_addr, ident.master_port, ident.launcher, ident.derived) == ("10.0.0.1", 29400, "torchrun", [])


@pytest.mark.parametrize("port", ["http", "65535", "0"])
def test_unusable_master_port_is_rejected(registry, port):
    env = {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "h", "MASTER_PORT": port}
    with pytest.raises(UsageError, match="MASTER_PORT"):
        derive(env, registry)
