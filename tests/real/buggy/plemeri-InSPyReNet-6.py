# expect: hardcoded-cuda0
# source: https://github.com/plemeri/InSPyReNet/pull/6
# reason: DDP training pinned each process to a configured device id instead of its local rank, which broke with CUDA_VISIBLE_DEVICES; the merged fix uses local_rank and drops device_id.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

CONFIG = {"Train": {"device": "cuda:0", "batch_size": 6, "epochs": 60, "lr": 1e-5}}


def train(opt, args):
    dist.init_process_group(backend="nccl")
    device = torch.device(opt["Train"]["device"])
    torch.cuda.set_device(device)
    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 1, 1)).to(device)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[device], find_unused_parameters=False)
    data = TensorDataset(torch.randn(10553, 3, 384, 384), torch.rand(10553, 1, 384, 384))
    sampler = DistributedSampler(data, shuffle=True)
    loader = DataLoader(data, batch_size=opt["Train"]["batch_size"], sampler=sampler, num_workers=8, pin_memory=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=opt["Train"]["lr"])
    for epoch in range(opt["Train"]["epochs"]):
        sampler.set_epoch(epoch)
        for img, gt in loader:
            loss = nn.functional.binary_cross_entropy_with_logits(model(img.to(device)), gt.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if args.local_rank <= 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", -1)))
    train(CONFIG, parser.parse_args())
