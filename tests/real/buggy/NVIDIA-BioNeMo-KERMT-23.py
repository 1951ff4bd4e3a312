# expect:
# source: https://github.com/NVIDIA-BioNeMo/KERMT/issues/23
# reason: The finetune model keeps pretraining heads that its forward never calls; the issue states find_unused_parameters=True is currently necessary, otherwise DDP raises the unused-parameters error.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class FinetuneModel(nn.Module):
    def __init__(self, pretrained_encoder):
        super().__init__()
        self.encoder = pretrained_encoder
        self.vocab_head = nn.Linear(512, 4000)  # from pretraining, not used when finetuning
        self.ffn = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, x):
        return self.ffn(self.encoder(x))


def main():
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    is_distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    torch.cuda.set_device(local_rank)
    if is_distributed:
        dist.init_process_group("nccl")
    model = FinetuneModel(nn.Sequential(nn.Linear(128, 512), nn.ReLU())).cuda(local_rank)
    if is_distributed:
        model = DDP(model, device_ids=[local_rank], find_unused_parameters=True)
    data = TensorDataset(torch.randn(8000, 128), torch.randn(8000, 1))
    sampler = DistributedSampler(data) if is_distributed else None
    loader = DataLoader(data, batch_size=32, sampler=sampler, shuffle=sampler is None)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(30):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
    if is_distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
