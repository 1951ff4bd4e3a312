# expect: logging-from-all-ranks
# source: https://github.com/DLLXW/baby-llama2-chinese/pull/56
# reason: The pretraining script saved the weights with `if ddp and rank == 0: torch.save(...) else: torch.save(...)`, meant as 'DDP or single GPU', so under DDP rank 0 took the first branch and every other rank the else branch, and all of them wrote the same checkpoint file at once; torch.load then failed with 'PytorchStreamReader failed reading file ...: invalid header or archive is corrupted'; the merged fix saves from rank 0 only.
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

out_dir = "out/pretrain"
max_epoch = 2
batch_size = 32
max_seq_len = 512
learning_rate = 3e-4
save_interval = 5000


class TinyLlama(nn.Module):
    def __init__(self, vocab=64793, dim=512, n_layers=8):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, 8, 4 * dim, batch_first=True, norm_first=True)
        self.layers = nn.TransformerEncoder(layer, n_layers)
        self.output = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens, targets):
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.size(1), device=tokens.device)
        logits = self.output(self.layers(self.tok_embeddings(tokens), mask=mask, is_causal=True))
        return nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=0)


def get_lr(it, warmup_iters=1000, lr_decay_iters=80000, min_lr=1e-5):
    if it < warmup_iters:
        return learning_rate * it / warmup_iters
    ratio = min(1.0, (it - warmup_iters) / (lr_decay_iters - warmup_iters))
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (learning_rate - min_lr)


def save_weights(model, path, ddp):
    if ddp and dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
    else:
        raw_model = model.module if ddp else model
        torch.save(raw_model.state_dict(), path)


def train_epoch(epoch, model, loader, optimizer, ddp, iter_per_epoch):
    start_time = time.time()
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        lr = get_lr(epoch * iter_per_epoch + step)
        for group in optimizer.param_groups:
            group["lr"] = lr
        loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 100 == 0 and (not ddp or dist.get_rank() == 0):
            print(f"Epoch:[{epoch}/{max_epoch}]({step}/{iter_per_epoch}) loss:{loss.item():.3f} "
                  f"lr:{lr:.7f} time:{time.time() - start_time:.1f}s")
        if step % save_interval == 0:
            model.eval()
            save_weights(model, f"{out_dir}/epoch_{epoch}_step_{step}.pth", ddp)
            model.train()


def main():
    ddp = int(os.environ.get("RANK", -1)) != -1
    if ddp:
        dist.init_process_group(backend="nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
    os.makedirs(out_dir, exist_ok=True)

    tokens = torch.randint(1, 64793, (10000, max_seq_len + 1))
    dataset = TensorDataset(tokens[:, :-1], tokens[:, 1:])
    sampler = DistributedSampler(dataset) if ddp else None
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, shuffle=sampler is None,
                        pin_memory=True, drop_last=False, num_workers=0)

    model = TinyLlama().cuda()
    if ddp:
        model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, betas=(0.9, 0.95), weight_decay=0.1)
    for epoch in range(max_epoch):
        if sampler is not None:
            sampler.set_epoch(epoch)
        train_epoch(epoch, model, loader, optimizer, ddp, len(loader))
        save_weights(model, f"{out_dir}/epoch_{epoch}.pth", ddp)
    if ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
