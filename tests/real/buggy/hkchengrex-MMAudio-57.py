# expect: hardcoded-cuda0
# source: https://github.com/hkchengrex/MMAudio/pull/57
# reason: Under a multi-GPU launch every process placed its networks and tensors on the bare "cuda" device, i.e. cuda:0, so all ranks piled onto the first GPU; the merged fix uses the process's local rank for the device.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

local_rank = int(os.environ["LOCAL_RANK"])
world_size = int(os.environ["WORLD_SIZE"])


def distributed_setup():
    dist.init_process_group(backend="nccl")
    return local_rank, world_size


class AudioGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.text_proj = nn.Linear(512, 256)
        self.net = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 1024))

    def forward(self, text_emb):
        return self.net(self.text_proj(text_emb))


def train(cfg):
    distributed_setup()
    device = "cuda"
    net = AudioGenerator().to(device)
    net = DDP(net)
    dataset = TensorDataset(torch.randn(4096, 512), torch.randn(4096, 1024))
    sampler = DistributedSampler(dataset, rank=local_rank, shuffle=True)
    loader = DataLoader(dataset, batch_size=cfg["batch_size"], sampler=sampler, num_workers=4)
    optimizer = torch.optim.AdamW(net.parameters(), lr=cfg["lr"])
    for epoch in range(cfg["epochs"]):
        sampler.set_epoch(epoch)
        for text, audio in loader:
            text, audio = text.to(device, non_blocking=True), audio.to(device, non_blocking=True)
            loss = nn.functional.mse_loss(net(text), audio)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if local_rank == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    train({"batch_size": 16, "lr": 1e-4, "epochs": 50})
