# expect: unused-parameters-error
# source: https://github.com/joanaapa/Distillation-DNABERT-Promoter/issues/1
# reason: MiniLM-style distillation trained the student only on the last layer's self-attention distributions and value relations, so the student's last feed-forward block and its prediction head (whose outputs forward still returned) never received a gradient and DDP raised the 'parameters that were not used in producing loss' error; the maintainer confirmed and suggested removing the last layers from the student during distillation.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Layer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.attn_out = nn.Linear(dim, dim)
        self.intermediate = nn.Linear(dim, 4 * dim)
        self.output = nn.Linear(4 * dim, dim)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
        probs = scores.softmax(-1)
        ctx = (probs @ v).transpose(1, 2).reshape(b, n, d)
        h = self.norm1(x + self.attn_out(ctx))
        h = self.norm2(h + self.output(F.gelu(self.intermediate(h))))
        return h, scores, v


class Encoder(nn.Module):
    def __init__(self, vocab=4101, dim=384, heads=12, depth=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Layer(dim, heads) for _ in range(depth))
        self.cls = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.LayerNorm(dim), nn.Linear(dim, vocab))

    def forward(self, ids):
        h = self.embed(ids)
        for layer in self.layers:
            h, scores, values = layer(h)
        return {"logits": self.cls(h), "attention_scores": scores, "values": values}


def minilm_loss(student, teacher):
    attn = F.kl_div(student["attention_scores"].log_softmax(-1), teacher["attention_scores"].softmax(-1),
                    reduction="batchmean")
    s_rel = (student["values"] @ student["values"].transpose(-1, -2)).log_softmax(-1)
    t_rel = (teacher["values"] @ teacher["values"].transpose(-1, -2)).softmax(-1)
    return attn + F.kl_div(s_rel, t_rel, reduction="batchmean")


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    teacher = Encoder(dim=768, depth=12).to(device).eval()
    student = Encoder().to(device)
    student = nn.parallel.DistributedDataParallel(student, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(student.parameters(), lr=5e-4)
    data = TensorDataset(torch.randint(0, 4101, (20000, 128)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for (ids,) in loader:
            ids = ids.to(device)
            with torch.no_grad():
                t_out = teacher(ids)
            loss = minilm_loss(student(ids), t_out)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
