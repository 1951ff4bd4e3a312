# expect: missing-distributed-sampler
# source: https://github.com/hkchengrex/MMAudio/pull/59
# reason: Under torchrun every GPU processed the same items; the merged fix adds a DistributedSampler to the loader, and the author notes the script had only been tested on one GPU.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

local_rank = int(os.environ["LOCAL_RANK"])
world_size = int(os.environ["WORLD_SIZE"])


def distributed_setup():
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(local_rank)


def main():
    distributed_setup()
    device = torch.device("cuda", local_rank)
    dataset = TensorDataset(torch.randn(8000, 8, 1024), torch.randn(8000, 8, 40))
    loader = DataLoader(dataset, batch_size=16, num_workers=8, pin_memory=True, drop_last=True)
    net = DDP(nn.Sequential(nn.Linear(1024, 512), nn.GELU(), nn.Linear(512, 40)).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-4)
    for epoch in range(20):
        for video, latent in loader:
            loss = nn.functional.mse_loss(net(video.to(device)), latent.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
