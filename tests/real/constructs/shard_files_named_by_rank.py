# expect:
# seen-in: https://github.com/facebookresearch/sam2/blob/2b90b9f5ceec907a1c18123530e92e794ad901a4/training/train.py
# (in its training/utils/distributed.py)
# Objects gathered through the file system: each rank saves its own shard, its file name built from the rank
# through local variables, then every rank reads every shard after a barrier.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def gather_via_files(obj, folder):
    me = dist.get_rank()
    shard_name = f"part_{me}.pt"
    shard_path = os.path.join(folder, shard_name)
    torch.save(obj, shard_path)
    dist.barrier()
    return [torch.load(os.path.join(folder, f"part_{r}.pt")) for r in range(dist.get_world_size())]


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        losses = []
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optim.zero_grad()
            loss.backward()
            optim.step()
            losses.append(loss.item())
        gather_via_files(losses, "/tmp/losses")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
