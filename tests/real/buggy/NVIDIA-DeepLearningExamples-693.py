# expect: checkpoint-without-module
# source: https://github.com/NVIDIA/DeepLearningExamples/pull/693
# reason: Checkpoints were written from the DDP-wrapped model, so their keys carry the wrapper's "module." prefix and no longer match the bare model they are loaded into when resuming; the merged fix strips the prefix on load.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def build_model(arch):
    width = {"resnet50": 2048, "resnext101": 4096}[arch]
    return nn.Sequential(nn.Conv2d(3, 64, 7, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(64, width), nn.ReLU(), nn.Linear(width, 1000))


def save_checkpoint(state, filename):
    if dist.get_rank() == 0:
        torch.save(state, filename)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--resume", default=None)
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--workspace", default="./")
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")

    model = build_model(args.arch)
    start_epoch = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(local_rank))
        model.load_state_dict(checkpoint["state_dict"])
        start_epoch = checkpoint["epoch"]
    model = model.cuda()
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.256, momentum=0.875, weight_decay=3.05e-5)
    criterion = nn.CrossEntropyLoss().cuda()

    dataset = TensorDataset(torch.randn(4096, 3, 64, 64), torch.randint(0, 1000, (4096,)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=5, pin_memory=True)
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        for images, target in loader:
            loss = criterion(model(images.cuda(non_blocking=True)), target.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_checkpoint({"epoch": epoch + 1, "arch": args.arch, "state_dict": model.state_dict(),
                         "optimizer": optimizer.state_dict()},
                        os.path.join(args.workspace, "checkpoint.pth.tar"))


if __name__ == "__main__":
    main()
