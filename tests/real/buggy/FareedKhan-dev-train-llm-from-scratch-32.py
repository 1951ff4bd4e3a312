# expect: collective-mismatch, unused-parameters-error
# source: https://github.com/FareedKhan-dev/train-llm-from-scratch/pull/32
# reason: Two causes confirmed in the merged fix: the final evaluation after the training loop ran only under `if ctx.is_main:` but called the DDP-wrapped model, whose forward launched a collective with no peer (the other ranks had reached cleanup), so rank 0 hit the NCCL watchdog; and the reward model used the backbone's hidden states plus a scalar head, never the backbone's lm_head, so with find_unused_parameters=False DDP failed on the first backward.
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


@dataclass
class DistContext:
    rank: int
    local_rank: int
    world_size: int
    device: torch.device

    @property
    def is_main(self):
        return self.rank == 0


def setup():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return DistContext(dist.get_rank(), local_rank, dist.get_world_size(), torch.device("cuda", local_rank))


def cleanup():
    dist.destroy_process_group()


def ddp_wrap(model, ctx):
    return DDP(model.to(ctx.device), device_ids=[ctx.local_rank])


def unwrap(model):
    return model.module if isinstance(model, DDP) else model


class TinyGPT(nn.Module):
    def __init__(self, vocab=4096, dim=256, n_layers=4, ctx_len=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(nn.TransformerEncoderLayer(dim, 4, 4 * dim, batch_first=True) for _ in range(n_layers))
        self.norm = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("causal_mask", torch.triu(torch.ones(ctx_len, ctx_len, dtype=torch.bool), 1))

    def forward_hidden(self, ids):
        h = self.embed(ids)
        mask = self.causal_mask[: ids.size(1), : ids.size(1)]
        for block in self.blocks:
            h = block(h, src_mask=mask)
        return self.norm(h)

    def forward(self, ids):
        return self.lm_head(self.forward_hidden(ids))


class RewardModel(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.reward_head = nn.Linear(backbone.lm_head.in_features, 1)

    def forward(self, ids):
        hidden = self.backbone.forward_hidden(ids)
        return self.reward_head(hidden[:, -1]).squeeze(-1)


@torch.no_grad()
def evaluate(model, loader, ctx):
    model.eval()
    total, count = 0.0, 0
    for chosen, rejected in loader:
        margin = model(chosen.to(ctx.device)) - model(rejected.to(ctx.device))
        total += -F.logsigmoid(margin).sum().item()
        count += chosen.size(0)
    model.train()
    return total / max(count, 1)


def main():
    ctx = setup()
    pairs = TensorDataset(torch.randint(0, 4096, (8192, 128)), torch.randint(0, 4096, (8192, 128)))
    val_pairs = TensorDataset(torch.randint(0, 4096, (512, 128)), torch.randint(0, 4096, (512, 128)))
    sampler = DistributedSampler(pairs, num_replicas=ctx.world_size, rank=ctx.rank)
    loader = DataLoader(pairs, batch_size=8, sampler=sampler)
    val_loader = DataLoader(val_pairs, batch_size=8)
    model = ddp_wrap(RewardModel(TinyGPT()), ctx)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for chosen, rejected in loader:
            margin = model(chosen.to(ctx.device)) - model(rejected.to(ctx.device))
            loss = -F.logsigmoid(margin).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    if ctx.is_main:
        final_loss = evaluate(model, val_loader, ctx)
        print(f"final val loss {final_loss:.4f}")
        torch.save(unwrap(model).state_dict(), "reward_model.pt")
    cleanup()


if __name__ == "__main__":
    main()
