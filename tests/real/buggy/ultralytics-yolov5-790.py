# expect: grad-accum-without-no-sync
# source: https://github.com/ultralytics/yolov5/issues/790
# reason: With gradient accumulation the DDP loop all-reduced on every backward; the maintainer welcomed the proposed no_sync change for the K-1 accumulation steps.
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

nbs = 64  # nominal batch size


def main(batch_size=8, epochs=300):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    total_batch_size = batch_size * dist.get_world_size()
    accumulate = max(round(nbs / total_batch_size), 1)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.SiLU(), nn.Conv2d(16, 85, 1)).to(device)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    dataset = TensorDataset(torch.randn(4000, 3, 64, 64), torch.randn(4000, 85, 32, 32))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
    scaler = torch.cuda.amp.GradScaler()
    nb = len(loader)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        optimizer.zero_grad()
        for i, (imgs, targets) in enumerate(loader):
            ni = i + nb * epoch
            with torch.autocast("cuda"):
                loss = nn.functional.mse_loss(model(imgs.to(device)), targets.to(device))
            scaler.scale(loss).backward()
            if ni % accumulate == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
