# The plain-DDP entry point of the same project calls the helper's save_checkpoint on rank 0 only; the
# Accelerate entry point's unguarded save_checkpoint() calls are to its own namesake, not to this one.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from utils import load_pretrained, save_checkpoint


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(512, 8), torch.randn(512, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DDP(load_pretrained(nn.Linear(8, 1)).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters())
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            save_checkpoint(model.module, epoch, f"ckpt_{epoch}.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
