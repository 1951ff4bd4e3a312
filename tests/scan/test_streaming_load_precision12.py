"""``load_dataset(..., streaming=True)`` on every rank reads the data over the network as it is iterated: nothing is
downloaded into the shared cache, so nothing contends (GaLore's C4 stream, FineWeb-Edu loaders that stream by default).
The same load without streaming still warns."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import os
import datasets
import torch
import torch.distributed as dist
import torch.nn as nn
from datasets import load_dataset
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def load_stream(name, streaming=True):
    return load_dataset(name, split="train", streaming=streaming)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    data = {load}
    data = datasets.distributed.split_dataset_by_node(data, rank=rank, world_size=world)
    loader = DataLoader(data, batch_size=8)
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for batch in loader:
        loss = model(batch["x"].cuda()).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
'''
CASES = {
    "streamed by name": ('load_dataset("allenai/c4", "en", split="train", streaming=True)', False),
    "streamed through the module": ('datasets.load_dataset("HuggingFaceFW/fineweb", name="sample-10BT", '
                                    'split="train", streaming=True)', False),
    "streamed by a wrapper's default": ('load_stream("HuggingFaceFW/fineweb-edu")', False),
    "downloaded": ('load_dataset("allenai/c4", "en", split="train")', True),
    "streaming switched off": ('load_dataset("allenai/c4", "en", split="train", streaming=False)', True),
}


@pytest.mark.parametrize("load, warns", CASES.values(), ids=CASES.keys())
def test_a_streamed_dataset_fills_no_cache(tmp_path, load, warns):
    assert shows(tmp_path, "hf-cache-contention", TEMPLATE.format(load=load)) is warns
