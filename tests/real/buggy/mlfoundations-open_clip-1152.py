# expect: collective-mismatch
# source: https://github.com/mlfoundations/open_clip/issues/1152
# reason: evaluate() returns at once on every rank but the master, which then ran the zero-shot evaluation through the still DDP-wrapped model (the unwrap to model.module sat only inside the later 'val' branch) while the other ranks already waited in the barrier main() calls after evaluation; the wrapped forward issues DDP's own collectives on rank 0 only, so the ranks pair mismatched collectives and the run hangs; the unwrap had to cover the zero-shot path too (closed).
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class TinyClip(nn.Module):
    def __init__(self, dim=256, vocab=49408):
        super().__init__()
        self.visual = nn.Sequential(nn.Conv2d(3, 64, 7, 4), nn.BatchNorm2d(64), nn.ReLU(),
                                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, dim))
        self.token_embedding = nn.Embedding(vocab, dim)
        self.logit_scale = nn.Parameter(torch.tensor(2.659))

    def forward(self, image=None, text=None):
        image_features = F.normalize(self.visual(image), dim=-1) if image is not None else None
        text_features = F.normalize(self.token_embedding(text).mean(1), dim=-1) if text is not None else None
        return image_features, text_features, self.logit_scale.exp()


def is_master(args):
    return args.rank == 0


def zero_shot_eval(model, data, args):
    classifier = torch.randn(256, 1000, device=args.device)
    top1, n = 0.0, 0
    with torch.no_grad():
        for images, target in data["imagenet-val"]:
            image_features, _, _ = model(image=images.to(args.device))
            logits = 100.0 * image_features @ classifier
            top1 += (logits.argmax(-1).cpu() == target).sum().item()
            n += images.size(0)
    return {"imagenet-zeroshot-val-top1": top1 / max(n, 1)}


def evaluate(model, data, epoch, args):
    metrics = {}
    if not is_master(args):
        return metrics
    model.eval()
    metrics.update(zero_shot_eval(model, data, args))
    if "val" in data and (epoch % args.val_frequency == 0 or epoch == args.epochs):
        if args.distributed:
            model = model.module
        with torch.no_grad():
            for images, texts in data["val"]:
                image_features, text_features, scale = model(image=images.to(args.device), text=texts.to(args.device))
                metrics["val_loss"] = F.cross_entropy(scale * image_features @ text_features.t(),
                                                      torch.arange(images.size(0), device=args.device)).item()
    print(f"eval epoch {epoch}: {metrics}")
    return metrics


def train_one_epoch(model, loader, optimizer, args):
    model.train()
    for images, texts in loader:
        image_features, text_features, scale = model(image=images.to(args.device), text=texts.to(args.device))
        logits = scale * image_features @ text_features.t()
        labels = torch.arange(images.size(0), device=args.device)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=32)
    parser.add_argument("--val-frequency", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    args.distributed = "WORLD_SIZE" in os.environ
    args.rank, args.local_rank = 0, 0
    if args.distributed:
        dist.init_process_group("nccl")
        args.rank, args.local_rank = dist.get_rank(), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.local_rank)
    args.device = torch.device("cuda", args.local_rank)

    pairs = TensorDataset(torch.randn(4096, 3, 64, 64), torch.randint(0, 49408, (4096, 16)))
    sampler = DistributedSampler(pairs) if args.distributed else None
    data = {
        "train": DataLoader(pairs, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None, drop_last=True),
        "val": DataLoader(pairs, batch_size=args.batch_size),
        "imagenet-val": DataLoader(TensorDataset(torch.randn(512, 3, 64, 64), torch.randint(0, 1000, (512,))),
                                   batch_size=args.batch_size),
    }
    model = TinyClip().to(args.device)
    if args.distributed:
        model = DistributedDataParallel(model, device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.2)

    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        train_one_epoch(model, data["train"], optimizer, args)
        evaluate(model, data, epoch + 1, args)
        if args.distributed:
            dist.barrier()


if __name__ == "__main__":
    main()
