# expect: collective-mismatch
# source: https://github.com/huggingface/transformers/pull/1081
# reason: Evaluation ran on the master process only, and load_and_cache_examples (called from it) entered torch.distributed.barrier() which the other ranks never reached; the merged fix skips the barrier when evaluating.
import argparse
import logging
import os

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, SequentialSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler

logger = logging.getLogger(__name__)


def load_and_cache_examples(args, evaluate=False):
    if args.local_rank not in [-1, 0]:
        torch.distributed.barrier()  # only the first process builds the cache
    cached = os.path.join(args.data_dir, "cached_{}".format("dev" if evaluate else "train"))
    if os.path.exists(cached):
        features = torch.load(cached)
    else:
        features = (torch.randint(0, 30522, (2000, 128)), torch.randint(0, 2, (2000,)))
        if args.local_rank in [-1, 0]:
            torch.save(features, cached)
    if args.local_rank == 0:
        torch.distributed.barrier()  # the others may now read the cache
    return TensorDataset(*features)


def evaluate(args, model):
    eval_dataset = load_and_cache_examples(args, evaluate=True)
    loader = DataLoader(eval_dataset, sampler=SequentialSampler(eval_dataset), batch_size=32)
    correct = 0
    with torch.no_grad():
        for ids, labels in loader:
            correct += (model(ids.to(args.device)).argmax(-1) == labels.to(args.device)).sum().item()
    return correct / len(eval_dataset)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--local_rank", type=int, default=-1)
    p.add_argument("--data_dir", default="glue/MRPC")
    p.add_argument("--do_eval", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO if args.local_rank in [-1, 0] else logging.WARN)
    torch.cuda.set_device(args.local_rank)
    torch.distributed.init_process_group(backend="nccl")
    args.device = torch.device("cuda", args.local_rank)
    model = nn.Sequential(nn.Embedding(30522, 64), nn.Flatten(), nn.Linear(64 * 128, 2)).to(args.device)
    train_dataset = load_and_cache_examples(args, evaluate=False)
    sampler = DistributedSampler(train_dataset)
    loader = DataLoader(train_dataset, sampler=sampler, batch_size=8)
    model = DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for ids, labels in loader:
            loss = nn.functional.cross_entropy(model(ids.to(args.device)), labels.to(args.device))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    if args.do_eval and args.local_rank in [-1, 0]:
        logger.info("accuracy %.3f", evaluate(args, model.module))
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
