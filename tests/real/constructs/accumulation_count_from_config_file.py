# expect:
# seen-in: https://github.com/facebookresearch/DPR/blob/a31212dc0a54dfa85d8bfa01e1669f149ac832b7/train_dense_encoder.py
# The accumulation count comes from a configuration file the repository ships (every one sets it to 1), so no
# extra all-reduce runs as shipped: accumulating without no_sync is advice here, not a defect.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def train_epoch(model, optimizer, loader, cfg):
    model.train()
    for step, (x, y) in enumerate(loader):
        loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
        loss.backward()
        if (step + 1) % cfg["train"]["gradient_accumulation_steps"] == 0:
            optimizer.step()
            model.zero_grad()


def main():
    with open(os.environ.get("TRAIN_CONFIG", "conf/train.yaml")) as handle:
        cfg = yaml.safe_load(handle)
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(16, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["train"]["lr"])
    data = TensorDataset(torch.randn(1024, 16), torch.randn(1024, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(cfg["train"]["epochs"]):
        sampler.set_epoch(epoch)
        train_epoch(model, optimizer, loader, cfg)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
