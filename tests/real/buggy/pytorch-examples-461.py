# expect: collective-mismatch
# source: https://github.com/pytorch/examples/issues/461
# reason: Validation was run on the first process of each node only (a rank test on `args.rank % ngpus_per_node`), through the DDP-wrapped ResNet; DDP's forward still broadcasts the BatchNorm buffers from rank 0, a collective the other ranks never join, so the run locks up (the maintainer's answer: "the all_reduce step will still be run").
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torchvision.models as models
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--world-size", type=int, default=1)
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    return parser.parse_args()


def accuracy(output, target):
    return (output.argmax(1) == target).float().mean() * 100.0


def validate(val_loader, model, criterion, gpu):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for images, target in val_loader:
            images, target = images.cuda(gpu, non_blocking=True), target.cuda(gpu, non_blocking=True)
            output = model(images)
            criterion(output, target)
            total += accuracy(output, target).item()
    return total / max(len(val_loader), 1)


def train_one_epoch(train_loader, model, criterion, optimizer, gpu):
    model.train()
    for images, target in train_loader:
        images, target = images.cuda(gpu, non_blocking=True), target.cuda(gpu, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main_worker(gpu, ngpus_per_node, args):
    args.rank = args.rank * ngpus_per_node + gpu
    dist.init_process_group("nccl", init_method=args.dist_url, world_size=args.world_size, rank=args.rank)
    torch.cuda.set_device(gpu)
    model = models.__dict__[args.arch]().cuda(gpu)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    criterion = nn.CrossEntropyLoss().cuda(gpu)
    optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9)

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_set = datasets.ImageFolder(os.path.join(args.data, "train"), transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.ToTensor(), normalize]))
    val_set = datasets.ImageFolder(os.path.join(args.data, "val"), transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), normalize]))
    batch = args.batch_size // ngpus_per_node
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=batch, sampler=train_sampler, num_workers=args.workers)
    val_loader = DataLoader(val_set, batch_size=batch, shuffle=False, num_workers=args.workers)

    best = 0.0
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        train_one_epoch(train_loader, model, criterion, optimizer, gpu)
        if args.rank % ngpus_per_node == 0:
            acc1 = validate(val_loader, model, criterion, gpu)
            if acc1 > best:
                best = acc1
                torch.save({"epoch": epoch + 1, "state_dict": model.module.state_dict()}, "model_best.pth.tar")


def main():
    args = parse()
    ngpus_per_node = torch.cuda.device_count()
    args.world_size = ngpus_per_node * args.world_size
    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))


if __name__ == "__main__":
    main()
