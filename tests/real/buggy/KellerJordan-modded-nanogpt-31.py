# expect: grad-accum-without-no-sync
# source: https://github.com/KellerJordan/modded-nanogpt/pull/31
# reason: The accumulation loop entered model.no_sync() around loss.backward() only, after the forward pass had already run outside it, so DDP still synchronised gradients on every micro-step; the merged fix puts the forward inside the no_sync context too.
import os
from contextlib import nullcontext

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class GPT(nn.Module):
    def __init__(self, vocab=50304, dim=768, layers=12):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.blocks = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 12, 4 * dim, batch_first=True), layers)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx, targets):
        logits = self.lm_head(self.blocks(self.wte(idx)))
        return nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class DistributedDataLoader:
    def __init__(self, batch_size, seq_len, rank, world_size):
        self.B, self.T, self.rank, self.world = batch_size, seq_len, rank, world_size
        self.tokens = torch.randint(0, 50304, (10_000_000,))
        self.pos = rank * batch_size * seq_len

    def next_batch(self):
        span = self.tokens[self.pos:self.pos + self.B * self.T + 1]
        self.pos += self.B * self.T * self.world
        if self.pos + self.B * self.T * self.world + 1 > len(self.tokens):
            self.pos = self.rank * self.B * self.T
        return span[:-1].view(self.B, self.T).cuda(), span[1:].view(self.B, self.T).cuda()


dist.init_process_group(backend="nccl")
ddp_rank = int(os.environ["RANK"])
ddp_local_rank = int(os.environ["LOCAL_RANK"])
ddp_world_size = int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(ddp_local_rank)
train_accumulation_steps = 8
model = DDP(GPT().cuda(), device_ids=[ddp_local_rank])
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95))
train_loader = DistributedDataLoader(64, 1024, ddp_rank, ddp_world_size)
x, y = train_loader.next_batch()
for step in range(5100):
    for i in range(1, train_accumulation_steps + 1):
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = model(x, y)
        x, y = train_loader.next_batch()
        with model.no_sync() if i < train_accumulation_steps else nullcontext():
            loss.backward()
    for p in model.parameters():
        p.grad /= train_accumulation_steps
    optimizer.step()
    model.zero_grad(set_to_none=True)
dist.destroy_process_group()
