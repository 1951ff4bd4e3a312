# expect: logging-from-all-ranks
# source: https://github.com/huggingface/pytorch-image-models/pull/693
# reason: The training script creates its checkpoint saver (and so writes tmp.pth.tar, then renames it to last.pth.tar / the best checkpoint) when `args.local_rank == 0`, i.e. on one process per node; on a multi-node run with a shared output directory several processes write and rename the same files concurrently and the run dies with FileNotFoundError on the tmp -> last rename; the merged fix restricts checkpoint writing to the globally first process (`args.rank == 0`).
import argparse
import glob
import operator
import os
import shutil

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as NativeDDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import transforms


class CheckpointSaver:
    def __init__(self, model, optimizer, args, checkpoint_dir, max_history=10, decreasing=False):
        self.model, self.optimizer, self.args = model, optimizer, args
        self.checkpoint_dir = checkpoint_dir
        self.max_history = max_history
        self.cmp = operator.lt if decreasing else operator.gt
        self.checkpoint_files = []
        self.best_metric = None
        self.tmp_path = os.path.join(checkpoint_dir, "tmp.pth.tar")
        self.last_path = os.path.join(checkpoint_dir, "last.pth.tar")

    def _save(self, path, epoch, metric):
        unwrapped = self.model.module if hasattr(self.model, "module") else self.model
        torch.save({"epoch": epoch, "arch": self.args.model, "state_dict": unwrapped.state_dict(),
                    "optimizer": self.optimizer.state_dict(), "metric": metric}, path)

    def save_checkpoint(self, epoch, metric):
        self._save(self.tmp_path, epoch, metric)
        if os.path.exists(self.last_path):
            os.unlink(self.last_path)
        os.rename(self.tmp_path, self.last_path)
        filename = os.path.join(self.checkpoint_dir, f"checkpoint-{epoch}.pth.tar")
        shutil.copyfile(self.last_path, filename)
        self.checkpoint_files.append((filename, metric))
        self.checkpoint_files.sort(key=lambda x: x[1], reverse=not self.cmp(1, 0))
        while len(self.checkpoint_files) > self.max_history:
            stale, _ = self.checkpoint_files.pop()
            os.remove(stale)
        if self.best_metric is None or self.cmp(metric, self.best_metric):
            self.best_metric = metric
            shutil.copyfile(self.last_path, os.path.join(self.checkpoint_dir, "model_best.pth.tar"))
        return self.best_metric


def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    for images, target in loader:
        images, target = images.to(device, non_blocking=True), target.to(device, non_blocking=True)
        loss = loss_fn(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    correct = torch.zeros((), device=device)
    total = torch.zeros((), device=device)
    for images, target in loader:
        images, target = images.to(device, non_blocking=True), target.to(device, non_blocking=True)
        correct += (model(images).argmax(-1) == target).sum()
        total += target.numel()
    dist.all_reduce(correct)
    dist.all_reduce(total)
    return (100.0 * correct / total).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir")
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("-b", "--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--output", default="./output/train")
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    args = parser.parse_args()

    dist.init_process_group(backend="nccl", init_method="env://")
    args.world_size = dist.get_world_size()
    args.rank = dist.get_rank()
    torch.cuda.set_device(args.local_rank)
    device = torch.device("cuda", args.local_rank)

    model = torchvision.models.__dict__[args.model](num_classes=1000)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    model = NativeDDP(model, device_ids=[args.local_rank])

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_set = torchvision.datasets.ImageFolder(os.path.join(args.data_dir, "train"), transforms.Compose(
        [transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), normalize]))
    val_set = torchvision.datasets.ImageFolder(os.path.join(args.data_dir, "val"), transforms.Compose(
        [transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), normalize]))
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              num_workers=8, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, sampler=DistributedSampler(val_set, shuffle=False),
                            num_workers=8, pin_memory=True)
    loss_fn = nn.CrossEntropyLoss().to(device)

    saver = None
    if args.local_rank == 0:
        os.makedirs(args.output, exist_ok=True)
        saver = CheckpointSaver(model, optimizer, args, checkpoint_dir=args.output)

    best_metric = None
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        train_one_epoch(model, train_loader, optimizer, loss_fn, device)
        top1 = validate(model, val_loader, device)
        if args.rank == 0:
            print(f"epoch {epoch}: top1 {top1:.3f}")
        if saver is not None:
            best_metric = saver.save_checkpoint(epoch, metric=top1)
    if args.rank == 0 and best_metric is not None:
        print(f"*** Best metric: {best_metric} ({len(glob.glob(os.path.join(args.output, '*.pth.tar')))} files)")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
