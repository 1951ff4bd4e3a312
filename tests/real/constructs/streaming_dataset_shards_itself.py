# expect:
# seen-in: https://github.com/cloneofsimo/minRF/blob/4fc10e0cc8ba976152c7936a1af9717209f03e18/advanced/main_t2i.py
# A DataLoader over mosaicml-streaming's StreamingDataset, which partitions its samples by rank itself (RANK /
# WORLD_SIZE): no DistributedSampler, and none could be given to an iterable dataset.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from streaming import StreamingDataset
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_data = StreamingDataset(remote="s3://bucket/shards", local="/tmp/shards", shuffle=True, batch_size=32)
    train_loader = DataLoader(train_data, batch_size=32, num_workers=8)
    model = DistributedDataParallel(nn.Linear(64, 8).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for batch in train_loader:
        loss = model(batch["x"].cuda()).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
