# expect: missing-set-epoch
# source: https://github.com/kekmodel/FixMatch-pytorch/issues/34
# reason: train.py picks DistributedSampler for both the labeled and the unlabeled loader when local_rank != -1 but never calls set_epoch, so every epoch repeats the same order; the maintainer confirmed set_epoch has to be added.
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, RandomSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def get_args():
    parser = argparse.ArgumentParser(description="semi-supervised training")
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--mu", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=1024)
    parser.add_argument("--threshold", type=float, default=0.95)
    return parser.parse_args()


def train(args, labeled_loader, unlabeled_loader, model, optimizer):
    model.train()
    for epoch in range(args.epochs):
        unlabeled_iter = iter(unlabeled_loader)
        for inputs_x, targets_x in labeled_loader:
            (inputs_weak, inputs_strong), = [next(unlabeled_iter)]
            batch = torch.cat([inputs_x, inputs_weak, inputs_strong]).to(args.device)
            logits = model(batch)
            logits_x = logits[: inputs_x.shape[0]]
            logits_w, logits_s = logits[inputs_x.shape[0]:].chunk(2)
            pseudo = torch.softmax(logits_w.detach(), dim=-1)
            max_probs, targets_u = pseudo.max(dim=-1)
            mask = max_probs.ge(args.threshold).float()
            loss = F.cross_entropy(logits_x, targets_x.to(args.device)) + \
                (F.cross_entropy(logits_s, targets_u, reduction="none") * mask).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def main():
    args = get_args()
    if args.local_rank == -1:
        args.device = torch.device("cuda")
    else:
        torch.cuda.set_device(args.local_rank)
        args.device = torch.device("cuda", args.local_rank)
        dist.init_process_group(backend="nccl")
    labeled = TensorDataset(torch.randn(4000, 3 * 32 * 32), torch.randint(0, 10, (4000,)))
    unlabeled = TensorDataset(torch.randn(50000, 3 * 32 * 32), torch.randn(50000, 3 * 32 * 32))
    train_sampler = RandomSampler if args.local_rank == -1 else DistributedSampler
    labeled_loader = DataLoader(labeled, sampler=train_sampler(labeled), batch_size=args.batch_size, drop_last=True)
    unlabeled_loader = DataLoader(unlabeled, sampler=train_sampler(unlabeled),
                                  batch_size=args.batch_size * args.mu, drop_last=True)
    model = nn.Sequential(nn.Linear(3 * 32 * 32, 512), nn.ReLU(), nn.Linear(512, 10)).to(args.device)
    if args.local_rank != -1:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank],
                                                    output_device=args.local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9, nesterov=True)
    train(args, labeled_loader, unlabeled_loader, model, optimizer)


if __name__ == "__main__":
    main()
