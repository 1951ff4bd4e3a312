# expect:
# seen-in: https://github.com/mlfoundations/open_flamingo/blob/655f693fbfa04cd6e9a987d960654624d48917cf/open_flamingo/train/train.py
# (in its train_utils.py)
# A rank that meets a non-finite loss reports it and skips the batch: a message about this rank's own event,
# not a progress line every rank prints each step. As in the original, the skip comes after the step's first
# backward (two datasets, two losses per step), not before the only one.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            optim.zero_grad()
            nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
            loss = nn.functional.mse_loss(model(x.flip(0).cuda()), y.flip(0).cuda())
            if not torch.isfinite(loss):
                print(f"non-finite loss at step {step}, skipping the batch")
                print("inputs:", x)
                optim.zero_grad(set_to_none=True)
                continue
            loss.backward()
            optim.step()
            if rank == 0 and step % 50 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
