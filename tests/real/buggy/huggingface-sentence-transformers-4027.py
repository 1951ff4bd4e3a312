# expect: grad-accum-without-no-sync
# source: https://github.com/huggingface/sentence-transformers/issues/4027
# reason: The cached (GradCache) contrastive losses first embed the large batch without gradients, then re-embed it mini-batch by mini-batch and call backward on each piece through the DDP-wrapped model without no_sync, so DDP fires a full gradient all-reduce for every mini-batch of every column instead of once per optimizer step (64 all-reduces for batch 1024 / mini-batch 32 / two columns), with the overhead and hang risk the maintainers labelled a bug.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class SentenceEncoder(nn.Module):
    def __init__(self, vocab=30522, dim=384):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 6, 4 * dim, batch_first=True), 4)

    def forward(self, input_ids):
        return F.normalize(self.encoder(self.embed(input_ids)).mean(1), dim=-1)


class CachedMultipleNegativesRankingLoss:
    """GradCache: embed without grad, get the loss gradient w.r.t. the embeddings, replay mini-batch by mini-batch."""

    def __init__(self, model, mini_batch_size=32, scale=20.0):
        self.model = model
        self.mini_batch_size = mini_batch_size
        self.scale = scale

    def embed_without_grad(self, input_ids):
        with torch.no_grad():
            return torch.cat([self.model(chunk) for chunk in input_ids.split(self.mini_batch_size)])

    def __call__(self, anchors, positives):
        columns = [anchors, positives]
        reps = [self.embed_without_grad(col).requires_grad_() for col in columns]
        scores = self.scale * reps[0] @ reps[1].t()
        loss = F.cross_entropy(scores, torch.arange(scores.size(0), device=scores.device))
        loss.backward()
        cached_grads = [rep.grad for rep in reps]
        # second pass: one backward per mini-batch and per column, each through the DDP wrapper
        for col, grad in zip(columns, cached_grads):
            for chunk, chunk_grad in zip(col.split(self.mini_batch_size), grad.split(self.mini_batch_size)):
                surrogate = torch.dot(self.model(chunk).flatten(), chunk_grad.flatten())
                surrogate.backward()
        return loss.detach()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=1024)
    parser.add_argument("--mini_batch_size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    pairs = TensorDataset(torch.randint(0, 30522, (100000, 64)), torch.randint(0, 30522, (100000, 64)))
    sampler = DistributedSampler(pairs, drop_last=True)
    loader = DataLoader(pairs, batch_size=args.batch_size, sampler=sampler, drop_last=True)
    model = DistributedDataParallel(SentenceEncoder().to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    loss_fn = CachedMultipleNegativesRankingLoss(model, mini_batch_size=args.mini_batch_size)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for step, (anchors, positives) in enumerate(loader):
            optimizer.zero_grad()
            loss = loss_fn(anchors.to(device), positives.to(device))
            optimizer.step()
            if dist.get_rank() == 0 and step % 50 == 0:
                print(f"epoch {epoch} step {step}: loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
