# expect: missing-set-device
# source: https://github.com/pytorch/vision/issues/1119
# reason: The classification reference script with --apex moved the model to the default 'cuda' device and ran amp.initialize before init_distributed_mode had selected each process's GPU, so every process built its model on GPU 0 and the distributed run failed; the fix (pytorch/vision#1124) calls torch.cuda.set_device(args.gpu) before any model or tensor is created.
import argparse
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

try:
    from apex import amp
except ImportError:
    amp = None


def init_distributed_mode(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.gpu = int(os.environ["LOCAL_RANK"])
    else:
        args.distributed = False
        return
    args.distributed = True
    torch.distributed.init_process_group(backend="nccl", init_method=args.dist_url,
                                         world_size=args.world_size, rank=args.rank)


def train_one_epoch(model, criterion, optimizer, loader, device, apex=False):
    model.train()
    for image, target in loader:
        image, target = image.to(device), target.to(device)
        loss = criterion(model(image), target)
        optimizer.zero_grad()
        if apex:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()


def main(args):
    device = torch.device(args.device)
    model = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3), nn.BatchNorm2d(64), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(64, 1000))
    model.to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    if args.apex:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.apex_opt_level)

    init_distributed_mode(args)
    dataset = TensorDataset(torch.randn(2048, 3, 224, 224), torch.randint(0, 1000, (2048,)))
    sampler = DistributedSampler(dataset) if args.distributed else torch.utils.data.RandomSampler(dataset)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=args.workers, pin_memory=True)
    model_without_ddp = model
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        model_without_ddp = model.module
    for epoch in range(args.epochs):
        if args.distributed:
            sampler.set_epoch(epoch)
        train_one_epoch(model, criterion, optimizer, loader, device, args.apex)
        if not args.distributed or args.rank == 0:
            torch.save({"model": model_without_ddp.state_dict(), "epoch": epoch},
                       os.path.join(args.output_dir, "checkpoint.pth"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="PyTorch Classification Training")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("-b", "--batch-size", default=32, type=int)
    parser.add_argument("--epochs", default=90, type=int)
    parser.add_argument("-j", "--workers", default=16, type=int)
    parser.add_argument("--lr", default=0.1, type=float)
    parser.add_argument("--output-dir", default=".")
    parser.add_argument("--apex", action="store_true")
    parser.add_argument("--apex-opt-level", default="O1", type=str)
    parser.add_argument("--dist-url", default="env://")
    main(parser.parse_args())
