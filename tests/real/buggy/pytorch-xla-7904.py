# expect: missing-distributed-sampler
# source: https://github.com/pytorch/xla/issues/7904
# reason: The reporter expected MpDeviceLoader to split the data across the TPU processes started by xmp.spawn, but every device received all the samples; the maintainers answered that MpDeviceLoader only moves each process's own DataLoader batches onto its device, so the DataLoader needs a DistributedSampler over the world size and ordinal (the data-parallel example was then updated to show the sampler).
import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
from torch.utils.data import DataLoader, TensorDataset
from torch_xla import runtime as xr


def run(rank):
    device = xm.xla_device()
    features = torch.randn(4096, 16)
    labels = (features.sum(dim=1) > 0).long()
    loader = DataLoader(TensorDataset(features, labels), batch_size=64)
    device_loader = pl.MpDeviceLoader(loader, device)

    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(5):
        seen = 0
        for x, y in device_loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            xm.optimizer_step(optimizer)
            seen += x.shape[0]
        print(f"device {rank} epoch {epoch}: {seen} samples, expected {len(features) // xr.world_size()}")


if __name__ == "__main__":
    xmp.spawn(run, args=())
