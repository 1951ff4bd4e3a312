# expect: logging-from-all-ranks
# source: https://github.com/mmmwhy/pure_attention/pull/68
# reason: The Chinese-NMT DDP runner (torch.distributed.launch, --local_rank argument, AMP, DistributedSampler with set_epoch) called self.logger.info with the loss line after every step on every rank, so an 8-GPU run printed each step eight times; the maintainer's merged PR wraps the call in `if local_rank in [-1, 0]`.
import argparse
import logging
import math

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", default=-1, type=int)
FLAGS = parser.parse_args()
local_rank = FLAGS.local_rank

torch.cuda.set_device(local_rank)
dist.init_process_group(backend="nccl")


def init_logger(name):
    logger = logging.getLogger(name)
    logger.setLevel(logging.INFO)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    return logger


class PairDataset(Dataset):
    def __init__(self, n=20000, src_len=64, tgt_len=64, vocab=21128):
        self.src = torch.randint(1, vocab, (n, src_len))
        self.tgt = torch.randint(1, vocab, (n, tgt_len))

    def __len__(self):
        return len(self.src)

    def __getitem__(self, idx):
        tgt = self.tgt[idx]
        return {"src_text": self.src[idx], "tgt_text": tgt[:-1], "tgt_true": tgt[1:]}


class Seq2Seq(nn.Module):
    def __init__(self, vocab=21128, width=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.transformer = nn.Transformer(width, 8, 3, 3, 4 * width, batch_first=True)
        self.out = nn.Linear(width, vocab)

    def forward(self, src, tgt):
        mask = self.transformer.generate_square_subsequent_mask(tgt.size(1)).to(tgt.device)
        hidden = self.transformer(self.embed(src), self.embed(tgt), tgt_mask=mask)
        return self.out(hidden)


def cosine_with_warmup(optimizer, warmup, total):
    def factor(step):
        if step < warmup:
            return step / max(1, warmup)
        return 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


class Runner:
    def __init__(self):
        self.logger = init_logger(self.__class__.__name__)
        self.train_epochs_num = 15
        self.batch_size = 64

        train_dataset = PairDataset()
        train_sampler = DistributedSampler(train_dataset)
        self.train_dataloader = DataLoader(
            train_dataset, batch_size=self.batch_size, sampler=train_sampler, num_workers=4, pin_memory=True
        )

        self.total_step = len(self.train_dataloader) * self.train_epochs_num
        model = Seq2Seq().to(local_rank)
        self.ddp_model = DDP(model, device_ids=[local_rank], output_device=local_rank)
        self.optimizer = torch.optim.Adam(self.ddp_model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
        self.scheduler = cosine_with_warmup(self.optimizer, int(0.1 * self.total_step), self.total_step)
        self.criterion = nn.CrossEntropyLoss(ignore_index=0).to(local_rank)
        self.scaler = GradScaler()

    def run_epoch(self, dataloader, now_epoch, all_epoch):
        dataloader.sampler.set_epoch(now_epoch)
        for step, row in enumerate(dataloader):
            self.optimizer.zero_grad()
            with autocast():
                result = self.ddp_model(row["src_text"].to(local_rank), row["tgt_text"].to(local_rank))
                loss = self.criterion(result.view(-1, result.size(-1)), row["tgt_true"].view(-1).to(local_rank))
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.scheduler.step()

            self.logger.info(
                "Epoch: {epoch:03d} / {all_epoch:03d}, Step: {step:04d} / {all_step:04d}, "
                "Loss: {loss:.04f}, Lr: {lr:.08f}".format(
                    epoch=now_epoch,
                    all_epoch=all_epoch,
                    step=step,
                    all_step=len(dataloader),
                    loss=np.mean(loss.item()),
                    lr=self.optimizer.param_groups[0]["lr"],
                )
            )

    def run(self):
        for now_epoch in range(self.train_epochs_num):
            self.ddp_model.train()
            self.run_epoch(self.train_dataloader, now_epoch, self.train_epochs_num)


# python -m torch.distributed.launch --nproc_per_node 8 runner.py
if __name__ == "__main__":
    Runner().run()
