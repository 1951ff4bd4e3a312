# expect:
# seen-in: https://github.com/SparkJiao/MERIt/blob/e887dd11bd2969345a5fb07c47d49bd0245e41e6/reclor_trainer_base_v2.py
# The HF legacy example shape (run_squad / run_glue and their forks): the data loader puts the other ranks in a
# barrier while rank 0 builds the features cache, but only for the training split. Evaluation runs on rank 0 only
# and loads the "dev" or "test" split (a local name that only holds those literals, or a flag passed as a literal),
# so it never reaches a barrier: no collective on rank 0's evaluation path.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, SequentialSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def load_split(args, split="train"):
    if args.local_rank not in [-1, 0] and split == "train":
        dist.barrier()  # the other ranks wait for rank 0's features cache
    features = TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,)))
    if args.local_rank == 0 and split == "train":
        dist.barrier()
    return features


def evaluate(args, model, split="dev"):
    data = load_split(args, split=split)
    loader = DataLoader(data, sampler=SequentialSampler(data), batch_size=32)
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x.cuda()).argmax(-1) == y.cuda()).sum().item()
    return correct / len(data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--test_file", default=None)
    args = parser.parse_args()
    args.local_rank = int(os.environ.get("LOCAL_RANK", -1))
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(args.local_rank)
    train = load_split(args)
    sampler = DistributedSampler(train)
    loader = DataLoader(train, sampler=sampler, batch_size=32)
    model = DDP(nn.Linear(16, 4).cuda(), device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if args.local_rank in [-1, 0]:
        split = "dev"
        if args.test_file:
            split = "test"
        print(evaluate(args, model.module, split=split))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
