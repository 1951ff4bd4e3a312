# expect: missing-set-device
# source: https://github.com/awslabs/awsome-distributed-ai/pull/1046
# reason: The FSDP2 rewrite of the test case's train.py computed the rank's device from LOCAL_RANK but dropped the torch.cuda.set_device(device) call the FSDP1 version had, so every torchrun worker on a node defaulted to CUDA device 0 (OOM during unshard, NCCL 'Duplicate GPU detected'); the merged PR adds the call back.
import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class TokenDataset(Dataset):
    def __init__(self, num_samples, seq_len, vocab):
        self.data = torch.randint(0, vocab, (num_samples, seq_len + 1))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        return self.data[idx, :-1], self.data[idx, 1:]


class DecoderBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class CausalLM(nn.Module):
    def __init__(self, vocab, dim, layers, heads):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(DecoderBlock(dim, heads) for _ in range(layers))
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.size(1), device=tokens.device)
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, mask)
        return self.head(x)


def get_lr(step, args):
    if step < args.warmup_steps:
        return args.lr * (step + 1) / args.warmup_steps
    progress = (step - args.warmup_steps) / max(1, args.max_steps - args.warmup_steps)
    return 0.5 * args.lr * (1 + math.cos(math.pi * progress))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--seq_len", type=int, default=1024)
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--warmup_steps", type=int, default=100)
    parser.add_argument("--max_steps", type=int, default=1000)
    args = parser.parse_args()

    dist.init_process_group(backend="nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device(f"cuda:{local_rank}")
    mesh = init_device_mesh("cuda", (world_size,))

    model = CausalLM(args.vocab, args.dim, args.layers, args.heads)
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in model.layers:
        fully_shard(layer, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)

    dataset = TokenDataset(64 * args.batch_size * world_size, args.seq_len, args.vocab)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, drop_last=True)

    step, epoch = 0, 0
    while step < args.max_steps:
        sampler.set_epoch(epoch)
        for inputs, labels in loader:
            start = time.time()
            for group in optimizer.param_groups:
                group["lr"] = get_lr(step, args)
            logits = model(inputs.to(device))
            loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.to(device).flatten())
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if rank == 0 and step % 10 == 0:
                print(f"step {step} loss {loss.item():.4f} ({time.time() - start:.2f}s/step)")
            step += 1
            if step >= args.max_steps:
                break
        epoch += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
