# expect: collective-mismatch
# source: https://github.com/mlfoundations/open_clip/pull/1155
# reason: evaluate() returned early on every rank but the master, then the master ran the zero-shot pass through the still DDP-wrapped model while the other ranks waited at the barrier after evaluation; the DDP forward's collectives had no partners and the job deadlocked. The merged fix unwraps model.module at the top of evaluate().
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class TinyClip(nn.Module):
    def __init__(self, context_length=16, width=512, num_classes=100):
        super().__init__()
        self.visual = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, width), nn.LayerNorm(width))
        self.head = nn.Linear(width, num_classes)
        self.register_buffer("attn_mask", torch.full((context_length, context_length), float("-inf")).triu_(1),
                             persistent=False)

    def forward(self, images):
        return self.head(self.visual(images))


def is_master(args):
    return args.rank == 0


class Args:
    def __init__(self):
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        self.rank = int(os.environ.get("RANK", 0))
        self.world_size = int(os.environ.get("WORLD_SIZE", 1))
        self.distributed = self.world_size > 1
        self.device = f"cuda:{self.local_rank}"
        self.epochs = 10


def zero_shot_eval(model, classifier_inputs, args):
    model.eval()
    with torch.no_grad():
        logits = model(classifier_inputs.to(args.device))
    return {"zeroshot-top1": logits.argmax(-1).float().mean().item()}


def evaluate(model, data, epoch, args):
    metrics = {}
    if not is_master(args):
        return metrics
    metrics.update(zero_shot_eval(model, data["zeroshot"], args))
    if args.distributed:
        model = model.module
    with torch.no_grad():
        for images, labels in data["val"]:
            loss = F.cross_entropy(model(images.to(args.device)), labels.to(args.device))
            metrics["val_loss"] = loss.item()
    return metrics


def train_one_epoch(model, loader, optimizer, args):
    model.train()
    for images, labels in loader:
        loss = F.cross_entropy(model(images.to(args.device)), labels.to(args.device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    args = Args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    model = TinyClip()
    model = DistributedDataParallel(model.to(args.device), device_ids=[args.local_rank])
    dataset = TensorDataset(torch.randn(2048, 3, 32, 32), torch.randint(0, 100, (2048,)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    data = {"val": DataLoader(dataset, batch_size=64), "zeroshot": torch.randn(64, 3, 32, 32)}
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, args)
        evaluate(model, data, epoch, args)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
