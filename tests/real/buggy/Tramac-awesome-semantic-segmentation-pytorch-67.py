# expect: logging-from-all-ranks
# source: https://github.com/Tramac/awesome-semantic-segmentation-pytorch/issues/67
# reason: Under torch.distributed.launch the periodic checkpoint was guarded by a save_to_disk flag (rank 0 only), but validation() called save_checkpoint() on every rank, so all processes wrote the same best-model file at once and it came out corrupted; the fix confirmed in the thread saves only when save_to_disk (rank 0).
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def parse_args():
    parser = argparse.ArgumentParser(description="Semantic segmentation training")
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--save-dir", default="~/.torch/models")
    parser.add_argument("--save-epoch", type=int, default=10)
    parser.add_argument("--val-epoch", type=int, default=1)
    return parser.parse_args()


def save_checkpoint(model, args, is_best=False):
    directory = os.path.expanduser(args.save_dir)
    os.makedirs(directory, exist_ok=True)
    filename = os.path.join(directory, "fcn32s_vgg16_pascal_voc.pth")
    torch.save(model.module.state_dict(), filename)
    if is_best:
        torch.save(model.module.state_dict(), os.path.join(directory, "fcn32s_vgg16_pascal_voc_best_model.pth"))


class SegmentationTrainer:
    def __init__(self, args):
        self.args = args
        self.device = torch.device("cuda", args.local_rank)
        self.save_to_disk = dist.get_rank() == 0
        net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 21, 1)).to(self.device)
        self.model = nn.parallel.DistributedDataParallel(net, device_ids=[args.local_rank])
        train_set = TensorDataset(torch.randn(1464, 3, 96, 96), torch.randint(0, 21, (1464, 96, 96)))
        val_set = TensorDataset(torch.randn(256, 3, 96, 96), torch.randint(0, 21, (256, 96, 96)))
        self.train_sampler = DistributedSampler(train_set)
        self.train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=self.train_sampler, drop_last=True)
        self.val_loader = DataLoader(val_set, batch_size=1, sampler=DistributedSampler(val_set, shuffle=False))
        self.criterion = nn.CrossEntropyLoss(ignore_index=-1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=args.lr, momentum=0.9)
        self.best_pred = 0.0

    def train(self):
        for epoch in range(self.args.epochs):
            self.train_sampler.set_epoch(epoch)
            self.model.train()
            for images, targets in self.train_loader:
                images, targets = images.to(self.device), targets.to(self.device)
                loss = self.criterion(self.model(images), targets)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if epoch % self.args.save_epoch == 0 and self.save_to_disk:
                save_checkpoint(self.model, self.args, is_best=False)
            if epoch % self.args.val_epoch == 0:
                self.validation()

    def validation(self):
        self.model.eval()
        correct = torch.zeros(1, device=self.device)
        total = torch.zeros(1, device=self.device)
        with torch.no_grad():
            for images, targets in self.val_loader:
                pred = self.model(images.to(self.device)).argmax(1)
                correct += (pred == targets.to(self.device)).sum()
                total += targets.numel()
        dist.all_reduce(correct)
        dist.all_reduce(total)
        pix_acc = (correct / total).item()
        is_best = pix_acc > self.best_pred
        self.best_pred = max(pix_acc, self.best_pred)
        save_checkpoint(self.model, self.args, is_best)
        self.model.train()


if __name__ == "__main__":
    args = parse_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    SegmentationTrainer(args).train()
    dist.destroy_process_group()
