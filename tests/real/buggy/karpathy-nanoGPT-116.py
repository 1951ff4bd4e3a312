# expect: missing-set-device
# source: https://github.com/karpathy/nanoGPT/pull/116
# reason: The trainer derived device = f"cuda:{local_rank}" and moved the model and batches there, but never called torch.cuda.set_device, so each process's current CUDA device stayed cuda:0 and every rank created a context on GPU 0 (compile, pinned-memory copies, NCCL set-up); on a node whose GPUs are in exclusive-process mode the ranks died with "CUDA-capable device(s) is/are busy or unavailable". The merged fix adds torch.cuda.set_device(device) right after deriving the device; the maintainer also noted GPU 0 no longer carries the other ranks' bookkeeping.
import math
import os
import time

import torch
import torch.nn as nn
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

# ----------------------------------------------------------------------------- config
batch_size = 12
block_size = 256
vocab_size = 50304
n_embd = 384
max_iters = 2000
eval_interval = 250
learning_rate = 6e-4
backend = "nccl"
compile_model = True
out_dir = "out"
# -----------------------------------------------------------------------------

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    init_process_group(backend=backend)
    ddp_rank = int(os.environ["RANK"])
    ddp_local_rank = int(os.environ["LOCAL_RANK"])
    ddp_world_size = int(os.environ["WORLD_SIZE"])
    device = f"cuda:{ddp_local_rank}"
    master_process = ddp_rank == 0
    seed_offset = ddp_rank
else:
    device = "cuda"
    master_process = True
    seed_offset = 0
    ddp_world_size = 1

if master_process:
    os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(1337 + seed_offset)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, n_embd)
        self.pos = nn.Embedding(block_size, n_embd)
        layer = nn.TransformerEncoderLayer(n_embd, 6, 4 * n_embd, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, num_layers=6)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.blocks(self.tok(idx) + self.pos(pos))
        logits = self.head(x)
        return nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def get_batch():
    data = torch.randint(0, vocab_size, (batch_size, block_size + 1))
    x, y = data[:, :-1].pin_memory(), data[:, 1:].pin_memory()
    return x.to(device, non_blocking=True), y.to(device, non_blocking=True)


def lr_at(it):
    return learning_rate * 0.5 * (1.0 + math.cos(math.pi * it / max_iters))


torch.manual_seed(1337)
model = TinyLM().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, betas=(0.9, 0.95))
scaler = torch.cuda.amp.GradScaler()
if compile_model:
    model = torch.compile(model)
if ddp:
    model = DDP(model, device_ids=[ddp_local_rank])
raw_model = model.module if ddp else model

t0 = time.time()
for it in range(max_iters):
    for group in optimizer.param_groups:
        group["lr"] = lr_at(it)
    x, y = get_batch()
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        loss = model(x, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)

    if it % eval_interval == 0 and master_process:
        print(f"iter {it}: loss {loss.item():.4f}, {time.time() - t0:.1f}s")
        torch.save({"model": raw_model.state_dict(), "iter": it}, os.path.join(out_dir, "ckpt.pt"))

if ddp:
    destroy_process_group()
