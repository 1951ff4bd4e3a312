# expect: unused-parameters-error
# source: https://github.com/pytorch/vision/issues/2505
# reason: The user's ResNet classifier keeps a second head `fc2` in __init__ that its forward no longer calls; wrapped in DistributedDataParallel without find_unused_parameters, training stops with DDP's "Expected to have finished reduction in the prior iteration" error; the maintainer's answer: remove fc2 from __init__ or pass find_unused_parameters=True, and the user confirmed it then worked.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import transforms


class ResNetClassifier(nn.Module):
    def __init__(self, num_classes=100, hidden=512):
        super().__init__()
        backbone = torchvision.models.resnet50()
        in_features = backbone.fc.in_features
        backbone.fc = nn.Identity()
        self.backbone = backbone
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, num_classes)
        self.relu = nn.ReLU()

    def forward(self, x):
        features = self.backbone(x)
        h = self.relu(self.fc1(features))
        return self.classifier(h)


def train_epoch(model, loader, criterion, optimizer, device):
    model.train()
    running = 0.0
    for images, labels in loader:
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running / max(1, len(loader))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="./data")
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()

    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    transform = transforms.Compose([
        transforms.RandomResizedCrop(224),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize((0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)),
    ])
    if local_rank == 0:
        torchvision.datasets.CIFAR100(args.data, train=True, download=True)
    dist.barrier()
    dataset = torchvision.datasets.CIFAR100(args.data, train=True, download=False, transform=transform)
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=8, pin_memory=True)

    model = ResNetClassifier(num_classes=100)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model).to(device)
    model = DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        loss = train_epoch(model, loader, criterion, optimizer, device)
        scheduler.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {loss:.4f}")
            torch.save(model.module.state_dict(), "resnet_classifier.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
