# expect: missing-distributed-sampler
# source: https://github.com/deepspeedai/DeepSpeed/pull/2907
# reason: The engine's data-loader helper built validation and test loaders with a SequentialSampler, so under data parallelism every rank iterated the whole evaluation set (duplicated work on every GPU); the merged PR uses a DistributedSampler for validation/test sets.
import argparse
import os

import deepspeed
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, SequentialSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class RegressionModel(nn.Module):
    def __init__(self, dim=512):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, 1))

    def forward(self, x, y):
        return nn.functional.mse_loss(self.body(x).squeeze(-1), y)


class Trainer:
    def __init__(self, args):
        self.args = args
        deepspeed.init_distributed()
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        self.rank = torch.distributed.get_rank()
        self.world_size = torch.distributed.get_world_size()
        model = RegressionModel()
        self.engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())

    def dataloader(self, dataset, batch_size, training):
        if training:
            sampler = DistributedSampler(dataset, num_replicas=self.world_size, rank=self.rank)
        else:
            sampler = SequentialSampler(dataset)
        return DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=2, drop_last=training), sampler

    def train_epoch(self, loader, sampler, epoch):
        sampler.set_epoch(epoch)
        self.engine.train()
        for x, y in loader:
            loss = self.engine(x.to(self.engine.device), y.to(self.engine.device))
            self.engine.backward(loss)
            self.engine.step()

    @torch.no_grad()
    def evaluate(self, loader):
        self.engine.eval()
        total = torch.zeros(2, device=self.engine.device)
        for x, y in loader:
            loss = self.engine(x.to(self.engine.device), y.to(self.engine.device))
            total += torch.stack([loss * len(y), torch.tensor(float(len(y)), device=total.device)])
        torch.distributed.all_reduce(total)
        return (total[0] / total[1]).item()

    def fit(self, train_set, val_set, epochs):
        train_loader, train_sampler = self.dataloader(train_set, self.args.batch_size, training=True)
        val_loader, _ = self.dataloader(val_set, self.args.eval_batch_size, training=False)
        for epoch in range(epochs):
            self.train_epoch(train_loader, train_sampler, epoch)
            val_loss = self.evaluate(val_loader)
            if self.rank == 0:
                print(f"epoch {epoch}: val loss {val_loss:.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--eval_batch_size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=5)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    train_set = TensorDataset(torch.randn(20000, 512), torch.randn(20000))
    val_set = TensorDataset(torch.randn(4000, 512), torch.randn(4000))
    Trainer(args).fit(train_set, val_set, args.epochs)


if __name__ == "__main__":
    main()
