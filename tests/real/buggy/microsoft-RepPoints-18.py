# expect:
# source: https://github.com/microsoft/RepPoints/issues/18
# reason: "Unexpected bus error encountered in worker ... insufficient shared memory (shm)" when launching the distributed training; the reporter found the container had not really been started with --ipc=host and a fresh container with the flag worked, so the training code was not at fault.
import argparse
import logging
import os
import os.path as osp

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


def init_dist(backend="nccl"):
    rank = int(os.environ["RANK"])
    num_gpus = torch.cuda.device_count()
    torch.cuda.set_device(rank % num_gpus)
    dist.init_process_group(backend=backend)


def get_dist_info():
    return dist.get_rank(), dist.get_world_size()


class CocoLikeDataset(Dataset):
    def __init__(self, num_images=118287, img_scale=(1333, 800)):
        self.num_images, self.img_scale = num_images, img_scale

    def __len__(self):
        return self.num_images

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(idx)
        w, h = self.img_scale
        img = torch.rand(3, h // 4, w // 4, generator=g)
        return img, torch.randint(0, 80, (1,), generator=g).squeeze(0)


def build_dataloader(dataset, imgs_per_gpu, workers_per_gpu):
    rank, world_size = get_dist_info()
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank)
    return DataLoader(dataset, batch_size=imgs_per_gpu, sampler=sampler, num_workers=workers_per_gpu, pin_memory=False)


class RepPointsDetectorStub(nn.Module):
    def __init__(self, num_classes=80):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3), nn.ReLU(), nn.Conv2d(64, 256, 3, 2, 1), nn.ReLU())
        self.neck = nn.Conv2d(256, 256, 1)
        self.cls_head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, num_classes))

    def forward(self, img, gt_label):
        return nn.functional.cross_entropy(self.cls_head(self.neck(self.backbone(img))), gt_label)


def train_detector(model, dataset, cfg, logger):
    rank, _ = get_dist_info()
    data_loader = build_dataloader(dataset, cfg["imgs_per_gpu"], cfg["workers_per_gpu"])
    local_rank = torch.cuda.current_device()
    model = DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=1e-4)
    for epoch in range(cfg["total_epochs"]):
        data_loader.sampler.set_epoch(epoch)
        for i, (img, gt_label) in enumerate(data_loader):
            loss = model(img.cuda(local_rank, non_blocking=True), gt_label.cuda(local_rank, non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if rank == 0 and i % 50 == 0:
                logger.info("Epoch [%d][%d/%d] loss: %.4f", epoch + 1, i, len(data_loader), loss.item())
        if rank == 0:
            os.makedirs(cfg["work_dir"], exist_ok=True)
            torch.save({"state_dict": model.module.state_dict(), "meta": {"epoch": epoch + 1}},
                       osp.join(cfg["work_dir"], f"epoch_{epoch + 1}.pth"))


def main():
    parser = argparse.ArgumentParser(description="Train a detector")
    parser.add_argument("config")
    parser.add_argument("--launcher", choices=["none", "pytorch"], default="pytorch")
    parser.add_argument("--validate", action="store_true")
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    cfg = {"imgs_per_gpu": 2, "workers_per_gpu": 2, "lr": 0.01, "total_epochs": 24,
           "work_dir": osp.join("work_dirs", osp.splitext(osp.basename(args.config))[0])}
    init_dist()
    logging.basicConfig(level=logging.INFO if dist.get_rank() == 0 else logging.ERROR)
    logger = logging.getLogger("mmdet")
    train_detector(RepPointsDetectorStub(), CocoLikeDataset(), cfg, logger)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
