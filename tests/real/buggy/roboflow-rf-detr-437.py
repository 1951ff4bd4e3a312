# expect: checkpoint-without-module, no-barrier-before-checkpoint-load
# source: https://github.com/roboflow/rf-detr/pull/437
# reason: Checkpoints were written from the DDP wrapper (keys prefixed "module."), and non-zero ranks could load before rank 0 finished writing; the PR saves model.module.state_dict() and waits before loading.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def save_on_master(obj, path):
    if dist.get_rank() == 0:
        torch.save(obj, path)


def main(output_dir="output", epochs=12):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = nn.Sequential(nn.Conv2d(3, 64, 7, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 91))
    model = DDP(model.to(device), device_ids=[local_rank])
    data = TensorDataset(torch.randn(2000, 3, 320, 320), torch.randint(0, 91, (2000,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler, num_workers=4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    best_path = os.path.join(output_dir, "checkpoint_best_total.pth")
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for img, target in loader:
            loss = nn.functional.cross_entropy(model(img.to(device)), target.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_on_master({"model": model.state_dict(), "epoch": epoch}, best_path)
    checkpoint = torch.load(best_path, map_location="cpu")
    model.load_state_dict(checkpoint["model"])
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
