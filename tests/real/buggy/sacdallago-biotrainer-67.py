# expect: loss-not-on-device
# source: https://github.com/sacdallago/biotrainer/issues/67
# reason: With use_class_weights the class weights stayed on the CPU while the model ran on the GPU; the maintainers fixed it by sending the weights to the device.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def compute_class_weights(labels, n_classes):
    counts = torch.bincount(labels, minlength=n_classes).float()
    return counts.sum() / (n_classes * counts.clamp(min=1))


def main(use_class_weights=True):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    embeddings, labels = torch.randn(12000, 1024), torch.randint(0, 8, (12000,))
    weights = compute_class_weights(labels, 8) if use_class_weights else None
    loss_function = nn.CrossEntropyLoss(weight=weights)
    model = DDP(nn.Sequential(nn.Conv1d(1024, 32, 1), nn.ReLU(), nn.Flatten(), nn.Linear(32, 8)).to(device),
                device_ids=[local_rank])
    data = TensorDataset(embeddings.unsqueeze(-1), labels)
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=128, sampler=sampler)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(200):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = loss_function(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
