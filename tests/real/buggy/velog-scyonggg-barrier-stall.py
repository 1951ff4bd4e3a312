# expect: collective-mismatch
# source: https://prod.velog.io/@scyonggg/dist.getrank-0-후-dist.barrier에서-stall되는-현상
# reason: Training stalled at the epoch-end torch.distributed.barrier(): the trainer ran validation (and the checkpoint save) only under `if torch.distributed.get_rank() == 0:`, and the validation method called the DistributedDataParallel-wrapped encoder itself, whose forward takes part in collective work (buffer broadcast of its BatchNorm statistics), so rank 0 waited in that forward for ranks that were already at the barrier; the author's fix was to call the unwrapped `self.encoder.module(input)` in validation.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Encoder(nn.Module):
    def __init__(self, num_classes=100):
        super().__init__()
        self.features = nn.Sequential(conv_bn(3, 32), conv_bn(32, 64, 2), conv_bn(64, 128, 2), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(128, num_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


class Trainer:
    def __init__(self, args):
        self.args = args
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        train_set = TensorDataset(torch.randn(2048, 3, 32, 32), torch.randint(0, 100, (2048,)))
        val_set = TensorDataset(torch.randn(512, 3, 32, 32), torch.randint(0, 100, (512,)))
        self.train_sampler = DistributedSampler(train_set)
        self.train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=self.train_sampler, num_workers=4)
        self.val_loader = DataLoader(val_set, batch_size=args.batch_size, shuffle=False)
        encoder = Encoder().cuda()
        self.encoder = DistributedDataParallel(encoder, device_ids=[self.local_rank])
        self.optimizer = torch.optim.SGD(self.encoder.parameters(), lr=args.lr, momentum=0.9)
        self.CELoss = nn.CrossEntropyLoss()

    @staticmethod
    def accuracy(outputs, gt, topk=(1, 5)):
        _, pred = outputs.topk(max(topk), 1, True, True)
        correct = pred.t().eq(gt.view(1, -1).expand_as(pred.t()))
        return [correct[:k].reshape(-1).float().mean().item() * 100 for k in topk]

    def train_one_epoch(self):
        self.encoder.train()
        for data in self.train_loader:
            input = data[0].cuda()
            gt = data[1].cuda()
            output = self.encoder(input)
            loss = self.CELoss(output, gt)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def validation(self):
        acc1 = 0.0
        acc5 = 0.0
        losses = []
        self.encoder.eval()
        with torch.no_grad():
            for data in self.val_loader:
                input = data[0].cuda()
                gt = data[1].cuda()
                outputs = self.encoder(input)
                losses.append(self.CELoss(outputs, gt))
                acc1_, acc5_ = self.accuracy(outputs, gt, topk=(1, 5))
                acc1 += acc1_
                acc5 += acc5_
        return acc1 / len(self.val_loader), acc5 / len(self.val_loader), sum(losses) / len(losses)

    def fit(self):
        for epoch in range(self.args.epochs):
            self.train_sampler.set_epoch(epoch)
            self.train_one_epoch()
            if torch.distributed.get_rank() == 0:
                acc1, acc5, loss = self.validation()
                print(f"epoch {epoch}: acc@1 {acc1:.2f} acc@5 {acc5:.2f} loss {loss:.4f}")
                torch.save(self.encoder.module.state_dict(), os.path.join(self.args.out, f"encoder_{epoch}.pth"))
            torch.distributed.barrier()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--out", default="checkpoints")
    args = parser.parse_args()
    dist.init_process_group(backend="nccl")
    Trainer(args).fit()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
