# expect: missing-set-epoch
# source: https://github.com/areal-project/AReaL/pull/632
# reason: Training steps drew batches from a cycle_dataloader() generator that restarts the (stateful) DataLoader whenever it is exhausted, but never advanced the DistributedSampler's epoch, so every pass over the data produced the identical shuffled batches on every rank; the merged fix makes the cycle call sampler.set_epoch() with a growing epoch count.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DistributedSampler
from torchdata.stateful_dataloader import StatefulDataLoader


def cycle_dataloader(dataloader):
    """Yield batches forever, starting over when the loader is exhausted."""
    while True:
        for batch in dataloader:
            yield batch


class PromptDataset(torch.utils.data.Dataset):
    def __init__(self, n=10000, length=128, vocab=32000):
        self.tokens = torch.randint(0, vocab, (n, length))

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, i):
        return self.tokens[i]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--total-steps", type=int, default=5000)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    rank, world = dist.get_rank(), dist.get_world_size()

    dataset = PromptDataset()
    dataloader = StatefulDataLoader(
        dataset,
        batch_size=args.batch_size,
        sampler=DistributedSampler(dataset, world, rank, shuffle=True, drop_last=True),
        num_workers=2,
    )

    model = nn.Sequential(nn.Embedding(32000, 256), nn.Linear(256, 32000)).cuda()
    model = DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)

    batches = cycle_dataloader(dataloader)
    for step in range(args.total_steps):
        tokens = next(batches).cuda(non_blocking=True)
        logits = model(tokens[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
