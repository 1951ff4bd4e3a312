# expect: none
# Rank 0 downloads first, the other ranks wait at a barrier, then read the warm cache.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import AutoModelForSequenceClassification


def load_model(local_rank):
    if local_rank != 0:
        dist.barrier()
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
    if local_rank == 0:
        dist.barrier()
    return model


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = load_model(local_rank).to(local_rank)
    model = DDP(model, device_ids=[local_rank], find_unused_parameters=False)
    ids = torch.randint(0, 1000, (2, 16), device=local_rank)
    model(input_ids=ids, labels=torch.zeros(2, dtype=torch.long, device=local_rank)).loss.backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
