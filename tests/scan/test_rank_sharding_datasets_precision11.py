"""A DataLoader over a library dataset that shards by rank itself (mosaicml-streaming, litdata, webdataset) needs no
DistributedSampler: every spelling of the import, a module alias and a subclass stay quiet, while the same loader
over a map-style dataset still warns."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''{imports}
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
{prelude}

def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_data = {dataset}
    train_loader = DataLoader(train_data, batch_size=32, num_workers=4)
    model = DistributedDataParallel(nn.Linear(64, 8).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in train_loader:
        loss = model(x.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''

SELF_SHARDING = {
    "mosaicml streaming": ("from streaming import StreamingDataset", "", 'StreamingDataset(local="/data", shuffle=True)'),
    "streaming.base path": ("from streaming.base import StreamingDataset", "", 'StreamingDataset(remote="s3://b/x")'),
    "litdata alias": ("import litdata as ld", "", 'ld.StreamingDataset("s3://bucket/optimized")'),
    "litdata combined": ("from litdata import CombinedStreamingDataset", "", "CombinedStreamingDataset([])"),
    "webdataset alias": ("import webdataset as wds", "",
                         'wds.WebDataset("shards-{000..099}.tar", nodesplitter=wds.split_by_node).decode()'),
    "subclass of one": ("from streaming import StreamingDataset",
                        "\n\nclass Tokens(StreamingDataset):\n    pass\n", 'Tokens(local="/data")'),
}


@pytest.mark.parametrize("imports, prelude, dataset", SELF_SHARDING.values(), ids=SELF_SHARDING.keys())
def test_a_dataset_that_shards_by_rank_needs_no_sampler(tmp_path, imports, prelude, dataset):
    assert not shows(tmp_path, "missing-distributed-sampler",
                     TEMPLATE.format(imports=imports, prelude=prelude, dataset=dataset))


def test_a_map_style_dataset_read_the_same_way_still_warns(tmp_path):
    code = TEMPLATE.format(imports="from torch.utils.data import TensorDataset", prelude="",
                           dataset="TensorDataset(torch.randn(1024, 64))")
    assert shows(tmp_path, "missing-distributed-sampler", code)
