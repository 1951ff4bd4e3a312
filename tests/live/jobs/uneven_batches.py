"""A real hang: rank 1's data has one batch fewer, so rank 0 waits in backward for a gradient all-reduce."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=300))  # longer than any start-up under load: the test ends the job
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 1))
    n = 4 if rank == 1 else 5  # uneven shards, no DistributedSampler padding
    loader = DataLoader(TensorDataset(torch.randn(n * 2, 8)), batch_size=2)
    for step, (x,) in enumerate(loader):
        loss = model(x).sum()
        loss.backward()
        print(f"rank {rank} step {step}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
