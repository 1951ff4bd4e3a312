# expect:
# seen-in: https://github.com/meta-llama/llama-recipes/blob/faae2fd877995430906e1d0904131ecdaa89a604/src/llama_cookbook/finetuning.py
# The batch goes to the local rank under FSDP and to cuda:0 only in the single-process branch of
# `if config.enable_fsdp:`: a distributed flag spelled with fsdp (or deepspeed) is a distributed-or-not test.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Config:
    enable_fsdp = bool(int(os.environ.get("ENABLE_FSDP", "1")))
    epochs = 3


def train(config):
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    data = TensorDataset(torch.randn(2048, 16), torch.randn(2048, 1))
    if config.enable_fsdp:
        dist.init_process_group("nccl")
        torch.cuda.set_device(local_rank)
        sampler = DistributedSampler(data)
        model = FSDP(nn.Linear(16, 1).to(local_rank), device_id=local_rank)
    else:
        sampler = None
        model = nn.Linear(16, 1).to("cuda:0")
    loader = DataLoader(data, batch_size=32, sampler=sampler, shuffle=sampler is None)
    optimizer = torch.optim.AdamW(model.parameters())
    for epoch in range(config.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            if config.enable_fsdp:
                x, y = x.to(local_rank), y.to(local_rank)
            else:
                x, y = x.to("cuda:0"), y.to("cuda:0")
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if config.enable_fsdp:
        dist.destroy_process_group()


if __name__ == "__main__":
    train(Config())
