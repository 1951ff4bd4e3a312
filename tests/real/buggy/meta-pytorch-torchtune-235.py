# expect: logging-from-all-ranks
# source: https://github.com/meta-pytorch/torchtune/pull/235
# reason: The fine-tuning recipe logged the loss on every step from every rank, so the output interleaved one fluctuating loss per rank and was hard to read; the merged change logs on rank 0 only.
import argparse
import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def get_logger(level="INFO"):
    logger = logging.getLogger(__name__)
    if not logger.hasHandlers():
        logger.addHandler(logging.StreamHandler())
    logger.setLevel(level)
    return logger


def init_distributed():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def recipe(args):
    log = get_logger("DEBUG")
    local_rank = init_distributed()
    device = torch.device("cuda", local_rank)
    model = nn.Sequential(nn.Embedding(32000, 512), nn.Linear(512, 32000)).to(device)
    model = DistributedDataParallel(model, device_ids=[local_rank])
    data = TensorDataset(torch.randint(0, 32000, (5000, 128)))
    sampler = DistributedSampler(data, shuffle=True, seed=args.seed)
    dataloader = DataLoader(data, batch_size=args.batch_size, sampler=sampler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for idx, (tokens,) in enumerate(dataloader):
            tokens = tokens.to(device)
            logits = model(tokens[:, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))
            log.info(f"Loss @ epoch {epoch} step {idx}: {loss.item()}")
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--seed", type=int, default=18)
    recipe(parser.parse_args())
