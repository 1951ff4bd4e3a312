# expect: collective-mismatch
# source: https://github.com/AMD-AGI/Primus/pull/854
# reason: The target-eval-loss early stop compared each rank's own validation loss (never reduced across data-parallel ranks) with the target: near the target one rank's local loss dipped below it and that rank left train() alone while the others kept training, so their next gradient all-reduce hung; the merged fix all-reduces the loss numerator/denominator before the test.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class PretrainTrainer:
    def __init__(self, model, train_set, valid_set, target_eval_loss=3.3, eval_interval=500, max_steps=200000):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.device = torch.device("cuda", self.local_rank)
        self.model = DistributedDataParallel(model.to(self.device), device_ids=[self.local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=3e-4)
        self.train_sampler = DistributedSampler(train_set)
        self.train_loader = DataLoader(train_set, batch_size=8, sampler=self.train_sampler)
        self.valid_loader = DataLoader(valid_set, batch_size=8, sampler=DistributedSampler(valid_set, shuffle=False))
        self.target_eval_loss = target_eval_loss
        self.eval_interval = eval_interval
        self.max_steps = max_steps
        self.step = 0

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        numerator, denominator = 0.0, 0
        for tokens, labels in self.valid_loader:
            logits = self.model(tokens.to(self.device))
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.to(self.device).flatten(), reduction="sum")
            numerator += loss.item()
            denominator += labels.numel()
        self.model.train()
        return numerator / max(denominator, 1)

    def train_step(self, tokens, labels):
        logits = self.model(tokens.to(self.device))
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.to(self.device).flatten())
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    def train(self):
        epoch = 0
        while self.step < self.max_steps:
            self.train_sampler.set_epoch(epoch)
            for tokens, labels in self.train_loader:
                self.train_step(tokens, labels)
                self.step += 1
                if self.step % self.eval_interval == 0:
                    eval_loss = self.evaluate()
                    if eval_loss <= self.target_eval_loss:
                        return self.step
            epoch += 1
        return self.step


class TinyLM(nn.Module):
    def __init__(self, vocab=32000, dim=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.body = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 8, batch_first=True), 4)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.head(self.body(self.embed(tokens)))


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    train_set = TensorDataset(torch.randint(0, 32000, (20000, 128)), torch.randint(0, 32000, (20000, 128)))
    valid_set = TensorDataset(torch.randint(0, 32000, (2000, 128)), torch.randint(0, 32000, (2000, 128)))
    trainer = PretrainTrainer(TinyLM(), train_set, valid_set)
    trainer.train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
