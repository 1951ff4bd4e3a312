# expect: logging-from-all-ranks
# source: https://github.com/openvinotoolkit/nncf/pull/2146
# reason: In the distributed classification sample every process wrote the metrics dump file and logged accuracy to MLflow, so the dumped metric came from whichever rank wrote last and disagreed with the best_acc1 saved in rank 0's checkpoint; the merged fix does both on the main process only.
import json
import os

import mlflow
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def write_metrics(acc, filename):
    avg = round(acc * 100, 2)
    metrics = {"Accuracy": avg}
    with open(filename, "w", encoding="utf8") as outfile:
        json.dump(metrics, outfile)


def validate(val_loader, model, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, target in val_loader:
            output = model(images.to(device))
            correct += (output.argmax(1).cpu() == target).sum().item()
            total += len(target)
    return correct / total


def main_worker(config):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
    model = DistributedDataParallel(model.to(device), device_ids=[local_rank])
    train_data = TensorDataset(torch.randn(5000, 3, 32, 32), torch.randint(0, 10, (5000,)))
    val_data = TensorDataset(torch.randn(1000, 3, 32, 32), torch.randint(0, 10, (1000,)))
    train_sampler = DistributedSampler(train_data)
    train_loader = DataLoader(train_data, batch_size=64, sampler=train_sampler)
    val_loader = DataLoader(val_data, batch_size=64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    best_acc1 = 0.0
    for epoch in range(config["epochs"]):
        train_sampler.set_epoch(epoch)
        model.train()
        for images, target in train_loader:
            loss = nn.functional.cross_entropy(model(images.to(device)), target.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        acc1 = validate(val_loader, model, device)
        if acc1 > best_acc1:
            best_acc1 = acc1
            if is_main_process():
                torch.save({"state_dict": model.module.state_dict(), "best_acc1": best_acc1}, config["checkpoint"])
        mlflow.log_metric("best_acc1", best_acc1)
        write_metrics(best_acc1, config["metrics_dump"])


if __name__ == "__main__":
    main_worker({"epochs": 30, "checkpoint": "best.pth", "metrics_dump": "metrics.json"})
