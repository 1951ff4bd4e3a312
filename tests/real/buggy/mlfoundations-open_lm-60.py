# expect: grad-accum-without-no-sync
# source: https://github.com/mlfoundations/open_lm/pull/60
# reason: With --accum-freq > 1 the training step split each batch into micro-batches and ran backward on every one of them through the DDP-wrapped model, so gradients were all-reduced on every micro-batch instead of once per optimizer step; the merged PR (closing #48) puts the non-final micro-batches under model.no_sync().
import argparse
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab-size", type=int, default=1024)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--accum-freq", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--log-every-n-steps", type=int, default=50)
    return parser.parse_args()


class TinyLM(nn.Module):
    def __init__(self, vocab_size, dim=256):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.block = nn.TransformerEncoderLayer(dim, 4, 4 * dim, batch_first=True)
        self.head = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, tokens):
        return self.head(self.block(self.embed(tokens)))


def world_info():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    return dist.get_rank(), dist.get_world_size(), torch.device("cuda", local_rank)


def train_one_epoch(model, loader, optimizer, args, epoch, rank, device):
    model.train()
    for step, (tokens,) in enumerate(loader):
        tokens = tokens.to(device, non_blocking=True)
        inputs, targets = tokens[:, :-1], tokens[:, 1:]
        optimizer.zero_grad(set_to_none=True)
        if args.accum_freq == 1:
            logits = model(inputs)
            total_loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
            total_loss.backward()
        else:
            per_micro = math.ceil(inputs.shape[0] / args.accum_freq)
            total_loss = 0.0
            for ii in range(args.accum_freq):
                lo, hi = ii * per_micro, min((ii + 1) * per_micro, inputs.shape[0])
                if lo >= hi:
                    break
                logits = model(inputs[lo:hi])
                local_loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets[lo:hi].reshape(-1))
                local_loss = local_loss * (hi - lo) / inputs.shape[0]
                local_loss.backward()
                total_loss += local_loss.item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if rank == 0 and step % args.log_every_n_steps == 0:
            print(f"epoch {epoch} step {step} loss {float(total_loss):.4f}")


def main():
    args = parse_args()
    rank, world_size, device = world_info()
    torch.manual_seed(0)
    tokens = torch.randint(0, args.vocab_size, (8192, args.seq_len + 1))
    dataset = TensorDataset(tokens)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, drop_last=True)
    model = DDP(TinyLM(args.vocab_size).to(device), device_ids=[device.index])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, args, epoch, rank, device)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
