# expect: hardcoded-cuda0
# source: https://github.com/open-mmlab/mmtracking/pull/310
# reason: When a tracker is trained with the distributed launcher, every rank initialises its detector from the pretrained checkpoint with a plain torch.load (no map_location); the tensors come back on the device they were saved from (cuda:0), so each process first allocates the whole checkpoint on GPU 0, wasting its memory and risking an out-of-memory there; the maintainers merged 'Always map location to cpu when load checkpoint'.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Detector(nn.Module):
    def __init__(self, num_classes=1):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.ReLU(), nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU())
        self.cls_head = nn.Conv2d(128, num_classes, 1)
        self.reg_head = nn.Conv2d(128, 4, 1)

    def forward(self, img):
        feat = self.backbone(img)
        return self.cls_head(feat), self.reg_head(feat)


class ByteTrackLike(nn.Module):
    def __init__(self, detector_pretrain=None):
        super().__init__()
        self.detector = Detector()
        self.detector_pretrain = detector_pretrain

    def init_weights(self):
        if self.detector_pretrain:
            checkpoint = torch.load(self.detector_pretrain)
            state_dict = checkpoint.get("state_dict", checkpoint)
            self.detector.load_state_dict(state_dict, strict=False)

    def forward(self, img, gt_heatmap, gt_boxes):
        cls_score, bbox_pred = self.detector(img)
        loss_cls = nn.functional.binary_cross_entropy_with_logits(cls_score, gt_heatmap)
        loss_bbox = nn.functional.l1_loss(bbox_pred, gt_boxes)
        return {"loss_cls": loss_cls, "loss_bbox": loss_bbox}


def init_dist(backend="nccl"):
    rank = int(os.environ["RANK"])
    num_gpus = torch.cuda.device_count()
    torch.cuda.set_device(rank % num_gpus)
    dist.init_process_group(backend=backend)


def parse_args():
    parser = argparse.ArgumentParser(description="Train a multi-object tracker")
    parser.add_argument("--detector-pretrain", default="checkpoints/yolox_x_crowdhuman_mot17.pth")
    parser.add_argument("--launcher", choices=["none", "pytorch"], default="none")
    parser.add_argument("--epochs", type=int, default=80)
    parser.add_argument("--samples-per-gpu", type=int, default=4)
    return parser.parse_args()


def main():
    args = parse_args()
    distributed = args.launcher != "none"
    if distributed:
        init_dist()
    device = torch.device("cuda", torch.cuda.current_device())

    model = ByteTrackLike(detector_pretrain=args.detector_pretrain)
    model.init_weights()
    model = model.to(device)
    if distributed:
        model = DistributedDataParallel(model, device_ids=[torch.cuda.current_device()], find_unused_parameters=False)

    frames = TensorDataset(torch.randn(1024, 3, 256, 256), torch.rand(1024, 1, 64, 64), torch.rand(1024, 4, 64, 64))
    sampler = DistributedSampler(frames) if distributed else None
    loader = DataLoader(frames, batch_size=args.samples_per_gpu, sampler=sampler, shuffle=sampler is None, num_workers=2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9, weight_decay=5e-4)

    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for img, heatmap, boxes in loader:
            losses = model(img.to(device), heatmap.to(device), boxes.to(device))
            loss = sum(losses.values())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
