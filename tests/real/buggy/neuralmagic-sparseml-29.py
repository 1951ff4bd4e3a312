# expect: collective-mismatch
# source: https://github.com/neuralmagic/sparseml/pull/29
# reason: In the vision training script only the main worker downloads and evaluates the validation set, but a distributed barrier was left at the validation dataset load point inside that rank-0-only section, so rank 0 waited for processes that never arrive and the run hung with no output; the merged PR removes that barrier.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, models, transforms


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--dataset-path", default="./data")
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--train-batch-size", type=int, default=64)
    parser.add_argument("--test-batch-size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=10)
    return parser.parse_args()


def is_main_worker(args):
    return args.local_rank in (-1, 0)


def dataset_transforms(train):
    ops = [transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip()] if train else [
        transforms.Resize(256), transforms.CenterCrop(224)]
    return transforms.Compose(ops + [transforms.ToTensor()])


def create_train_loader(args):
    dataset = datasets.ImageFolder(os.path.join(args.dataset_path, "train"), dataset_transforms(True))
    sampler = DistributedSampler(dataset) if args.local_rank != -1 else None
    loader = DataLoader(dataset, batch_size=args.train_batch_size, shuffle=sampler is None,
                        sampler=sampler, num_workers=8, pin_memory=True)
    return loader, sampler


def create_val_loader(args):
    if args.local_rank != -1:
        dist.barrier()
    dataset = datasets.ImageFolder(os.path.join(args.dataset_path, "val"), dataset_transforms(False))
    return DataLoader(dataset, batch_size=args.test_batch_size, shuffle=False, num_workers=8, pin_memory=True)


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            preds = model(images.to(device)).argmax(1)
            correct += (preds == labels.to(device)).sum().item()
            total += labels.numel()
    return correct / max(total, 1)


def main():
    args = parse_args()
    if args.local_rank != -1:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
    device = torch.device("cuda", max(args.local_rank, 0))

    train_loader, train_sampler = create_train_loader(args)
    val_loader = create_val_loader(args) if is_main_worker(args) else None

    model = models.__dict__[args.arch](num_classes=1000).to(device)
    if args.local_rank != -1:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        model.train()
        for images, labels in train_loader:
            loss = criterion(model(images.to(device)), labels.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if is_main_worker(args):
            print(f"epoch {epoch}: val acc {evaluate(model, val_loader, device):.4f}")


if __name__ == "__main__":
    main()
