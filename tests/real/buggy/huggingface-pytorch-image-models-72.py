# expect: hardcoded-cuda0
# source: https://github.com/huggingface/pytorch-image-models/issues/72
# reason: Resuming distributed AMP training ran out of memory on GPU 0: the EMA copy's resume helper read the checkpoint with torch.load(checkpoint_path) and no map_location, once in every process, so each rank materialised the saved CUDA tensors on the device they were saved from (GPU 0); the reporter narrowed the blow-up to the EMA resume and the maintainer pointed at the unmapped load (the regular checkpoint load maps to CPU).
import argparse
import os
from copy import deepcopy

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class EmaCopy:
    """Exponential moving average of a model's weights, kept on the training device."""

    def __init__(self, model, decay=0.9998, device="", resume=""):
        self.ema = deepcopy(model)
        self.ema.eval()
        self.decay = decay
        self.device = device
        if device:
            self.ema.to(device=device)
        if resume:
            self._restore(resume)
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def _restore(self, checkpoint_path):
        checkpoint = torch.load(checkpoint_path)
        if isinstance(checkpoint, dict) and "state_dict_ema" in checkpoint:
            cleaned = {}
            for key, value in checkpoint["state_dict_ema"].items():
                cleaned[key[7:] if key.startswith("module.") else key] = value
            self.ema.load_state_dict(cleaned)

    def update(self, model):
        source = model.module.state_dict() if hasattr(model, "module") else model.state_dict()
        with torch.no_grad():
            for key, ema_value in self.ema.state_dict().items():
                value = source[key].detach()
                if self.device:
                    value = value.to(device=self.device)
                if ema_value.dtype.is_floating_point:
                    ema_value.mul_(self.decay).add_(value, alpha=1.0 - self.decay)


def resume_main_weights(model, optimizer, path):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["state_dict"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--model-ema", action="store_true")
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()

    args.distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
    rank = dist.get_rank() if args.distributed else 0

    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    start_epoch = 0
    if args.resume:
        start_epoch = resume_main_weights(model, optimizer, args.resume)

    ema = EmaCopy(model, resume=args.resume) if args.model_ema else None
    if args.distributed:
        model = DistributedDataParallel(model, device_ids=[args.local_rank])

    data = TensorDataset(torch.randn(1024, 3, 32, 32), torch.randint(0, 10, (1024,)))
    sampler = DistributedSampler(data) if args.distributed else None
    loader = DataLoader(data, batch_size=64, shuffle=sampler is None, sampler=sampler)
    criterion = nn.CrossEntropyLoss().cuda()

    for epoch in range(start_epoch, args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        for images, targets in loader:
            images, targets = images.cuda(), targets.cuda()
            loss = criterion(model(images), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if ema is not None:
                ema.update(model)
        if rank == 0:
            state = {"epoch": epoch + 1, "state_dict": model.module.state_dict() if args.distributed else model.state_dict(),
                     "optimizer": optimizer.state_dict()}
            if ema is not None:
                state["state_dict_ema"] = ema.ema.state_dict()
            torch.save(state, "last.pth.tar")


if __name__ == "__main__":
    main()
