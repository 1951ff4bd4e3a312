# expect: hardcoded-cuda0
# source: https://blog.youkuaiyun.com/myknotruby/article/details/112635453
# reason: A detector trained with mp.spawn(main, nprocs=args.num_gpus, args=(cfg, args)) and DistributedDataParallel loaded its pretrained weights and its resume checkpoint with a bare torch.load(path): the tensors were restored to the GPU they were saved from, so every process allocated a large block on GPU 0 (nvidia-smi listed every process on card 0) and ran it out of memory; the author's fix was torch.load(path, map_location=lambda storage, loc: storage.cuda(local_rank)).
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def get_cfg(path):
    return {"lr": 0.01, "batch_size": 8, "max_epoch": 24, "pretrain": path, "output_dir": "output"}


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        self.stages = nn.Sequential(nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU(), nn.Conv2d(128, 256, 3, 2, 1), nn.ReLU())

    def forward(self, x):
        return self.stages(self.stem(x))


class Detector(nn.Module):
    def __init__(self, num_classes=20):
        super().__init__()
        self.backbone = Backbone()
        self.cls_head = nn.Conv2d(256, num_classes, 1)
        self.box_head = nn.Conv2d(256, 4, 1)

    def forward(self, images, targets):
        feats = self.backbone(images)
        cls = self.cls_head(feats).mean(dim=(2, 3))
        box = self.box_head(feats).mean(dim=(2, 3))
        return nn.functional.cross_entropy(cls, targets["labels"]) + nn.functional.l1_loss(box, targets["boxes"])


def build_loader(cfg, rank, world_size):
    images = torch.randn(512, 3, 128, 128)
    labels = torch.randint(0, 20, (512,))
    boxes = torch.rand(512, 4)
    dataset = TensorDataset(images, labels, boxes)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank)
    return DataLoader(dataset, batch_size=cfg["batch_size"], sampler=sampler, num_workers=2), sampler


def main(local_rank, cfg, args):
    world_size = args.num_gpus
    dist.init_process_group("nccl", init_method=args.dist_url, world_size=world_size, rank=local_rank)
    torch.cuda.set_device(local_rank)

    model = Detector()
    if cfg["pretrain"]:
        checkpoint = torch.load(cfg["pretrain"])
        model.backbone.load_state_dict(checkpoint["model"], strict=False)
    model.cuda(local_rank)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=1e-4)

    start_epoch = 0
    if args.resume:
        state = torch.load(args.resume)
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_epoch = state["epoch"] + 1

    loader, sampler = build_loader(cfg, local_rank, world_size)
    for epoch in range(start_epoch, cfg["max_epoch"]):
        sampler.set_epoch(epoch)
        model.train()
        for images, labels, boxes in loader:
            images = images.cuda(local_rank, non_blocking=True)
            targets = {"labels": labels.cuda(local_rank), "boxes": boxes.cuda(local_rank)}
            loss = model(images, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if local_rank == 0:
            os.makedirs(cfg["output_dir"], exist_ok=True)
            torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
                       os.path.join(cfg["output_dir"], "last.pth"))
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config-file", default="")
    parser.add_argument("--num-gpus", type=int, default=4)
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    parser.add_argument("--resume", default="")
    args = parser.parse_args()
    cfg = get_cfg("pretrained/backbone.pth")
    mp.spawn(main, nprocs=args.num_gpus, args=(cfg, args,))
