# expect: dataparallel, missing-set-device
# source: https://github.com/neuralmagic/sparseml/pull/1698
# reason: The torchvision training entry point, launched with torch.distributed.launch (one process per GPU), put the model on its device through a helper that wrapped it in torch.nn.DataParallel whenever several GPUs were visible, so each launched process drove every GPU with DataParallel (or failed when the distributed wrap followed); the merged fix accepts --local_rank, sets the process's device and wraps the model in DistributedDataParallel instead.
import argparse
import os

import torch
import torch.distributed as dist
import torchvision
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def init_distributed_mode(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.gpu = int(os.environ["LOCAL_RANK"])
    else:
        args.distributed = False
        return
    args.distributed = True
    dist.init_process_group(backend="nccl", init_method="env://", world_size=args.world_size, rank=args.rank)
    dist.barrier()


def model_to_device(model, device):
    """Moves a model to the device; several visible GPUs are used through DataParallel."""
    if device.startswith("cuda") and torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
        ids = list(range(torch.cuda.device_count()))
    else:
        ids = None
    model = model.to(device)
    return model, device, ids


def _create_model(arch_key, num_classes, device, pretrained=False):
    model = torchvision.models.__dict__[arch_key](weights="DEFAULT" if pretrained else None, num_classes=num_classes)
    model, device, _ = model_to_device(model=model, device=device)
    return model


def train_one_epoch(model, criterion, optimizer, data_loader, device, epoch, print_freq=100):
    model.train()
    for i, (image, target) in enumerate(data_loader):
        image, target = image.to(device), target.to(device)
        output = model(image)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % print_freq == 0 and (not dist.is_initialized() or dist.get_rank() == 0):
            print(f"epoch {epoch} [{i}/{len(data_loader)}] loss {loss.item():.4f}")


def main(args):
    init_distributed_mode(args)
    device = args.device
    train_dir = os.path.join(args.dataset_path, "train")
    dataset = torchvision.datasets.ImageFolder(train_dir, torchvision.transforms.Compose([
        torchvision.transforms.RandomResizedCrop(224), torchvision.transforms.ToTensor()]))
    if args.distributed:
        train_sampler = DistributedSampler(dataset)
    else:
        train_sampler = torch.utils.data.RandomSampler(dataset)
    data_loader = DataLoader(dataset, batch_size=args.batch_size, sampler=train_sampler, num_workers=args.workers,
                             pin_memory=True)

    model = _create_model(args.arch_key, len(dataset.classes), device, pretrained=args.pretrained)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)

    for epoch in range(args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        train_one_epoch(model, criterion, optimizer, data_loader, device, epoch)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Torchvision image classification training")
    parser.add_argument("--dataset-path", required=True)
    parser.add_argument("--arch-key", default="resnet50")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--pretrained", action="store_true")
    main(parser.parse_args())
