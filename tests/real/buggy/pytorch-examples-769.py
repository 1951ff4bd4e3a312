# expect: missing-distributed-sampler
# source: https://github.com/pytorch/examples/issues/769
# reason: The ImageNet example gave the training loader a DistributedSampler but built the validation loader without one, so under --multiprocessing-distributed every GPU validated the whole validation set and printed identical metrics; the example later added a DistributedSampler for the validation set (PR #980) and all-reduces the meters.
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.utils.data
import torch.utils.data.distributed
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms


def parse_args():
    parser = argparse.ArgumentParser(description="ImageNet-style training")
    parser.add_argument("data")
    parser.add_argument("-a", "--arch", default="resnet18")
    parser.add_argument("-j", "--workers", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("-b", "--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    parser.add_argument("--dist-backend", default="nccl")
    parser.add_argument("--world-size", type=int, default=1)
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--multiprocessing-distributed", action="store_true")
    return parser.parse_args()


def accuracy(output, target):
    with torch.no_grad():
        return (output.argmax(1) == target).float().mean().item() * 100.0


def train(loader, model, criterion, optimizer, epoch, gpu):
    model.train()
    for i, (images, target) in enumerate(loader):
        images, target = images.cuda(gpu, non_blocking=True), target.cuda(gpu, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(loader, model, criterion, gpu):
    model.eval()
    total_acc, batches, start = 0.0, 0, time.time()
    with torch.no_grad():
        for images, target in loader:
            images, target = images.cuda(gpu, non_blocking=True), target.cuda(gpu, non_blocking=True)
            output = model(images)
            criterion(output, target)
            total_acc += accuracy(output, target)
            batches += 1
    acc = total_acc / max(batches, 1)
    if dist.get_rank() == 0:
        print(f" * Acc@1 {acc:.3f} ({time.time() - start:.1f}s)")
    return acc


def main_worker(gpu, ngpus_per_node, args):
    args.rank = args.rank * ngpus_per_node + gpu
    dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                            world_size=args.world_size, rank=args.rank)
    torch.cuda.set_device(gpu)
    model = models.__dict__[args.arch]().cuda(gpu)
    batch_size = args.batch_size // ngpus_per_node
    workers = (args.workers + ngpus_per_node - 1) // ngpus_per_node
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    criterion = nn.CrossEntropyLoss().cuda(gpu)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(os.path.join(args.data, "train"), transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), normalize]))
    val_dataset = datasets.ImageFolder(os.path.join(args.data, "val"), transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), normalize]))

    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=batch_size, shuffle=False, num_workers=workers,
        pin_memory=True, sampler=train_sampler)
    val_loader = torch.utils.data.DataLoader(
        val_dataset, batch_size=batch_size, shuffle=False, num_workers=workers, pin_memory=True)

    best_acc1 = 0.0
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        train(train_loader, model, criterion, optimizer, epoch, gpu)
        acc1 = validate(val_loader, model, criterion, gpu)
        best_acc1 = max(acc1, best_acc1)
        if args.rank % ngpus_per_node == 0:
            torch.save({"epoch": epoch + 1, "state_dict": model.module.state_dict(), "best_acc1": best_acc1},
                       "checkpoint.pth.tar")


def main():
    args = parse_args()
    ngpus_per_node = torch.cuda.device_count()
    args.world_size = ngpus_per_node * args.world_size
    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))


if __name__ == "__main__":
    main()
