"""Steps per epoch that did not shrink when the world size grew (issue 11, session 11): a user comparing 1 and
2 GPUs pastes both runs, each started with the GPU count on its command line (``--gpus``, ``--num_gpus``,
``--ngpus``, ``mpirun -np``, ``horovodrun -np``) rather than a launcher's world-size print."""

from __future__ import annotations

import pytest

from tests.logs.helpers import analyse, shown

BAR = "Epoch 0: 100%|██████████| 1563/1563 [05:00<00:00,  5.21it/s, loss=1.23]\n"
SHARDED = "Epoch 0: 100%|██████████| 782/782 [02:40<00:00,  4.90it/s, loss=1.25]\n"
COMMANDS = {
    "gpus option": ("$ python train.py --gpus 1\n", "$ python train.py --gpus 2\n"),
    "num_gpus in an argument dump": ("Namespace(batch_size=32, num_gpus=1, lr=0.1)\n",
                                     "Namespace(batch_size=32, num_gpus=2, lr=0.1)\n"),
    "mpirun -np": ("$ mpirun -np 1 python train.py\n", "$ mpirun -np 2 -H node-a:1,node-b:1 python train.py\n"),
    "horovodrun -np": ("$ horovodrun -np 1 python train.py\n", "$ horovodrun -np 4 -H localhost:4 python train.py\n"),
}


@pytest.mark.parametrize("one, more", COMMANDS.values(), ids=COMMANDS.keys())
def test_epochs_as_long_after_more_gpus_read_as_an_unsharded_loader(rules, one, more):
    assert shown(rules, analyse(rules, one + BAR + more + BAR + BAR)) == ["missing-distributed-sampler"]


@pytest.mark.parametrize("one, more", COMMANDS.values(), ids=COMMANDS.keys())
def test_epochs_that_shrank_stay_clean(rules, one, more):
    assert shown(rules, analyse(rules, one + BAR + more + SHARDED + SHARDED)) == []


def test_a_list_of_gpu_ids_is_no_count(rules):
    facts = analyse(rules, "$ python train.py --gpus 0,1\n" + BAR)
    assert "log.world_size_first" not in facts
