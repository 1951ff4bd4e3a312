# expect: uneven-last-batch
# source: https://github.com/lifeiteng/vall-e/pull/131
# reason: The bucketing sampler shards cuts per rank with drop_last=False, so ranks can get different numbers of batches and the last DDP step waits forever; the merged PR forces drop_last=True when world_size > 1.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from lhotse import CutSet
from lhotse.dataset import DynamicBucketingSampler, SpeechSynthesisDataset
from torch.utils.data import DataLoader


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--manifest-dir", default="data/tokenized")
    parser.add_argument("--max-duration", type=float, default=40.0)
    parser.add_argument("--num-buckets", type=int, default=10)
    parser.add_argument("--drop-last", type=bool, default=False)
    parser.add_argument("--num-epochs", type=int, default=20)
    return parser


class TtsDataModule:
    def __init__(self, args):
        self.args = args

    def train_dataloaders(self, cuts_train, world_size, rank):
        sampler = DynamicBucketingSampler(cuts_train, max_duration=self.args.max_duration, shuffle=True,
                                          num_buckets=self.args.num_buckets, drop_last=self.args.drop_last,
                                          world_size=world_size, rank=rank)
        return DataLoader(SpeechSynthesisDataset(), sampler=sampler, batch_size=None, num_workers=4)


def run(rank, world_size, args):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    device = torch.device("cuda", rank)
    model = nn.Transformer(d_model=1024, nhead=16, batch_first=True).to(device)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.05)
    cuts = CutSet.from_file(os.path.join(args.manifest_dir, "cuts_train.jsonl.gz"))
    train_dl = TtsDataModule(args).train_dataloaders(cuts, world_size, rank)
    for epoch in range(args.num_epochs):
        train_dl.sampler.set_epoch(epoch)
        for batch in train_dl:
            x = batch["audio_features"].to(device)
            loss = model(x, x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), get_parser().parse_args())
