# expect: missing-set-epoch
# source: https://github.com/nvidia-cosmos/cosmos-rl/pull/609
# reason: The SFT worker feeds its DataLoader through a distributed batch sampler that derives its shuffle seed from its epoch counter, but the epoch loop (and the resume path) never calls `batch_sampler.set_epoch(epoch)`, so every epoch replays the same batch order on every rank; the merged fix calls set_epoch on the batch sampler at each epoch boundary and on resume.
import math
import os
import random

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, Sampler


class TokenizedSFTDataset(Dataset):
    def __init__(self, n_samples=20000, vocab=32000, max_len=1024, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.lengths = torch.randint(32, max_len, (n_samples,), generator=g).tolist()
        self.vocab = vocab

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, idx):
        n = self.lengths[idx]
        ids = torch.randint(0, self.vocab, (n,), generator=torch.Generator().manual_seed(idx))
        return {"input_ids": ids, "labels": ids.clone()}


class DistributedLengthGroupedBatchSampler(Sampler):
    """Groups samples of similar length into batches, shuffles the batches and shards them by rank."""

    def __init__(self, lengths, batch_size, num_replicas, rank, seed=0, mega_batch_mult=50):
        self.lengths = lengths
        self.batch_size = batch_size
        self.num_replicas = num_replicas
        self.rank = rank
        self.seed = seed
        self.mega = batch_size * mega_batch_mult
        self.epoch = 0
        self.num_batches = math.ceil(len(lengths) / batch_size / num_replicas)

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        rng = random.Random(self.seed + self.epoch)
        indices = list(range(len(self.lengths)))
        rng.shuffle(indices)
        batches = []
        for start in range(0, len(indices), self.mega):
            chunk = sorted(indices[start:start + self.mega], key=lambda i: self.lengths[i], reverse=True)
            batches += [chunk[i:i + self.batch_size] for i in range(0, len(chunk), self.batch_size)]
        rng.shuffle(batches)
        total = self.num_batches * self.num_replicas
        batches += batches[: total - len(batches)]
        return iter(batches[self.rank:total:self.num_replicas])

    def __len__(self):
        return self.num_batches


def collate(samples, pad_id=0):
    ids = nn.utils.rnn.pad_sequence([s["input_ids"] for s in samples], batch_first=True, padding_value=pad_id)
    labels = nn.utils.rnn.pad_sequence([s["labels"] for s in samples], batch_first=True, padding_value=-100)
    return {"input_ids": ids, "labels": labels}


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=32000, dim=512, layers=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        block = nn.TransformerEncoderLayer(dim, 8, 4 * dim, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        mask = nn.Transformer.generate_square_subsequent_mask(input_ids.size(1), device=input_ids.device)
        return self.head(self.blocks(self.embed(input_ids), mask=mask, is_causal=True))


class SFTWorker:
    def __init__(self, epochs=3, batch_size=8, lr=2e-5, ckpt_dir="ckpt"):
        dist.init_process_group("nccl")
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        self.device = torch.device("cuda", self.local_rank)
        self.epochs, self.ckpt_dir = epochs, ckpt_dir

        dataset = TokenizedSFTDataset()
        self.batch_sampler = DistributedLengthGroupedBatchSampler(
            dataset.lengths, batch_size, num_replicas=self.world_size, rank=self.rank, seed=1234)
        self.train_loader = DataLoader(dataset, batch_sampler=self.batch_sampler, collate_fn=collate,
                                       num_workers=4, pin_memory=True)
        self.model = DDP(TinyCausalLM().to(self.device), device_ids=[self.local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.train_step = 0

    def resume(self):
        path = os.path.join(self.ckpt_dir, "latest.pt")
        if not os.path.exists(path):
            return 0, 0
        state = torch.load(path, map_location=self.device)
        self.model.module.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.train_step = state["train_step"]
        steps_per_epoch = len(self.train_loader)
        return self.train_step // steps_per_epoch, self.train_step % steps_per_epoch

    def step(self, batch):
        ids, labels = batch["input_ids"].to(self.device), batch["labels"].to(self.device)
        logits = self.model(ids)
        loss = nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten(), ignore_index=-100)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.train_step += 1
        return loss.item()

    def save(self):
        if self.rank == 0:
            os.makedirs(self.ckpt_dir, exist_ok=True)
            torch.save({"model": self.model.module.state_dict(), "optimizer": self.optimizer.state_dict(),
                        "train_step": self.train_step}, os.path.join(self.ckpt_dir, "latest.pt"))
        dist.barrier()

    def main_loop(self):
        start_epoch, skip = self.resume()
        for epoch in range(start_epoch, self.epochs):
            for i, batch in enumerate(self.train_loader):
                if epoch == start_epoch and i < skip:
                    continue
                loss = self.step(batch)
                if self.rank == 0 and self.train_step % 50 == 0:
                    print(f"epoch {epoch} step {self.train_step} loss {loss:.4f}")
            self.save()
        dist.destroy_process_group()


if __name__ == "__main__":
    SFTWorker().main_loop()
