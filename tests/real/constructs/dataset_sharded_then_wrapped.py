# expect:
# seen-in: https://github.com/huggingface/nanoVLM/blob/4e0c0961846135c2217f95e54cb4c2d66eb55e42/train.py
# The training rows are cut to this rank's shard first (`rows.shard(num_shards=world, index=rank)`), then narrowed and
# wrapped twice before the loader: every step after the shard keeps the rank's share, so no sampler is needed.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from datasets import load_dataset
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


class Encoded(Dataset):
    def __init__(self, rows, width):
        self.rows, self.width = rows, width

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        return torch.tensor(self.rows[index]["features"][: self.width], dtype=torch.float32)


class Packed(Dataset):
    def __init__(self, items, per_pack):
        self.items, self.per_pack = items, per_pack

    def __len__(self):
        return len(self.items) // self.per_pack

    def __getitem__(self, index):
        return torch.stack([self.items[index * self.per_pack + k] for k in range(self.per_pack)]).mean(0)


def build_loader(holdout):
    rows = load_dataset("parquet", data_files="rows/*.parquet")["train"]
    if dist.is_initialized():
        rows = rows.shard(num_shards=dist.get_world_size(), index=dist.get_rank())
    rows = rows.select(range(holdout, len(rows)))
    items = Encoded(rows, width=8)
    items = Packed(items, per_pack=4)
    return DataLoader(items, batch_size=16, drop_last=True, num_workers=2)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    train_loader = build_loader(holdout=64)
    for x in train_loader:
        loss = model(x.cuda()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
