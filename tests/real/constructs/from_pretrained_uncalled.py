# expect:
# seen-in: https://github.com/karpathy/build-nanogpt/blob/6104ab1b53920f6e2159749676073ff7d815c1fa/train_gpt2.py
# A from_pretrained classmethod defined on the model but never called by the training script.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class GPT(nn.Module):
    def __init__(self, vocab_size=50304, n_embd=256):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx):
        return self.lm_head(self.wte(idx))

    @classmethod
    def from_pretrained(cls, model_type):
        from transformers import GPT2LMHeadModel
        hf = GPT2LMHeadModel.from_pretrained(model_type)
        model = cls()
        model.load_state_dict(hf.state_dict(), strict=False)
        return model


def main(max_steps=19073):
    ddp_rank = int(os.environ["RANK"])
    ddp_local_rank = int(os.environ["LOCAL_RANK"])
    ddp_world_size = int(os.environ["WORLD_SIZE"])
    dist.init_process_group(backend="nccl")
    device = f"cuda:{ddp_local_rank}"
    torch.cuda.set_device(device)
    master_process = ddp_rank == 0
    model = DDP(GPT().to(device), device_ids=[ddp_local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    gen = torch.Generator().manual_seed(ddp_rank)
    for step in range(max_steps):
        x = torch.randint(0, 50304, (16, 1024), generator=gen).to(device)
        logits = model(x[:, :-1])
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), x[:, 1:].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if master_process:
            print(f"step {step:5d} | loss: {loss.item():.6f} | world {ddp_world_size}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
