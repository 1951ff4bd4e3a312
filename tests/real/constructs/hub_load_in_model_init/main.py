# expect:
# seen-in: https://github.com/salesforce/LAVIS/blob/506965b9c4a18c1e565bd32acaccabe0198433f7/train.py
# The model class loads its tokenizer and text encoder from the Hub in __init__ (LAVIS's BLIP-2 models, mmf's
# encoders, mmpretrain's Hugging Face classifier): whether every rank builds it at once is the entry point's
# choice, which the library module cannot show. Here the entry lets the local main process build it first.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from captioner import Captioner


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    if local_rank != 0:
        dist.barrier()  # the other ranks wait until the local main process has filled the cache
    model = Captioner("bert-base-uncased")
    if local_rank == 0:
        dist.barrier()
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    for step in range(100):
        ids = torch.randint(0, 1000, (4, 32), device="cuda")
        loss = model(ids).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
