# expect: batchnorm-not-synced
# source: https://github.com/open-mmlab/mmdetection/issues/3621
# reason: Training with 2 images per GPU on 4 GPUs gave a clearly lower AP than 8 images on one GPU; the maintainer explained that plain BatchNorm then normalises over 2 images per process and advised SyncBN, which the reporter adopted.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

IMGS_PER_GPU = 2


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class TinyDetector(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(conv_bn(3, 32, 2), conv_bn(32, 64, 2), conv_bn(64, 128, 2))
        self.cls_head = nn.Conv2d(128, num_classes, 1)
        self.reg_head = nn.Conv2d(128, 4, 1)

    def forward(self, images):
        feats = self.backbone(images)
        return self.cls_head(feats), self.reg_head(feats)


def init_dist():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return local_rank


def build_loader(dataset):
    sampler = DistributedSampler(dataset)
    return sampler, DataLoader(dataset, batch_size=IMGS_PER_GPU, sampler=sampler, num_workers=2, drop_last=True)


def detection_loss(outputs, cls_t, box_t):
    cls_out, reg_out = outputs
    return F.cross_entropy(cls_out, cls_t) + F.smooth_l1_loss(reg_out, box_t)


def train(local_rank, epochs=12):
    device = torch.device("cuda", local_rank)
    model = DistributedDataParallel(TinyDetector().to(device), device_ids=[local_rank])
    dataset = TensorDataset(torch.randn(800, 3, 256, 256), torch.randint(0, 3, (800, 32, 32)),
                            torch.randn(800, 4, 32, 32))
    sampler, loader = build_loader(dataset)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02 * dist.get_world_size() * IMGS_PER_GPU / 16,
                                momentum=0.9, weight_decay=1e-4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for images, cls_t, box_t in loader:
            loss = detection_loss(model(images.to(device)), cls_t.to(device), box_t.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), f"work_dirs/epoch_{epoch + 1}.pth")


if __name__ == "__main__":
    train(init_dist())
    dist.destroy_process_group()
