# expect: checkpoint-without-module
# source: https://github.com/mead-ml/mead-baseline/pull/334
# reason: The distributed trainer checkpointed the DistributedDataParallel wrapper itself, so the saved model was the wrapper (everything under .module) rather than the model the rest of the library loads; the merged change saves the wrapped module.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Tagger(nn.Module):
    def __init__(self, vocab=20000, dim=128, labels=9):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * dim, labels)

    def forward(self, tokens):
        hidden, _ = self.rnn(self.embed(tokens))
        return self.out(hidden)


class TaggerTrainer:
    def __init__(self, model, basedir, local_rank):
        self.device = torch.device("cuda", local_rank)
        self.model = DistributedDataParallel(model.to(self.device), device_ids=[local_rank], output_device=local_rank)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.checkpoint_path = os.path.join(basedir, "tagger-model-%d" % os.getpid())

    def train(self, loader):
        self.model.train()
        for tokens, tags in loader:
            tokens, tags = tokens.to(self.device), tags.to(self.device)
            logits = self.model(tokens)
            loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), tags.reshape(-1))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def checkpoint(self):
        torch.save(self.model, self.checkpoint_path + ".pyt")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--basedir", default=".")
    args = parser.parse_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    data = TensorDataset(torch.randint(0, 20000, (4000, 50)), torch.randint(0, 9, (4000, 50)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    trainer = TaggerTrainer(Tagger(), args.basedir, args.local_rank)
    for epoch in range(20):
        sampler.set_epoch(epoch)
        trainer.train(loader)
        if dist.get_rank() == 0:
            trainer.checkpoint()


if __name__ == "__main__":
    main()
