"""DataLoader workers hand 4 MiB batches to each rank through /dev/shm (as every multi-worker loader does)."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    dist.init_process_group("gloo")
    data = TensorDataset(torch.randn(64, 256, 256))
    loader = DataLoader(data, batch_size=16, num_workers=2, sampler=DistributedSampler(data))
    total = torch.zeros(1)
    for (batch,) in loader:
        total += batch.sum()
    dist.all_reduce(total)
    print(f"rank {dist.get_rank()} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
