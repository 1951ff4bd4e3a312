# expect: batchnorm-not-synced
import argparse
import os

import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import transforms


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/data/imagenet/train")
    p.add_argument("--epochs", type=int, default=90)
    p.add_argument("--batch-size", type=int, default=8)
    return p.parse_args()


def main():
    args = parse()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    model = torchvision.models.resnet50().cuda()
    model = DDP(model, device_ids=[local_rank])
    dataset = torchvision.datasets.ImageFolder(args.data, transforms.ToTensor())
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=4)
    criterion = torch.nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, target in loader:
            output = model(images.cuda(non_blocking=True))
            loss = criterion(output, target.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), f"resnet50_{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
