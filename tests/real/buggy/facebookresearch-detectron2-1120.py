# expect: unused-parameters-error
# source: https://github.com/facebookresearch/detectron2/issues/1120
# reason: A custom model adds an extra head's loss only when a flag holds (`if flag: loss += output(x)`); on steps where it does not, that head's parameters get no gradient and DistributedDataParallel (built with find_unused_parameters=False) raises "Expected to have finished reduction in the prior iteration"; the maintainer points to find_unused_parameters, which the default trainer does not expose.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class DetectionSet(Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, i):
        image = torch.randn(3, 64, 64)
        target = torch.randn(4)
        has_masks = torch.tensor(i % 3 == 0)
        return image, target, has_masks


class MetaArch(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                      nn.Flatten())
        self.box_head = nn.Linear(32, 4)
        self.output = nn.Linear(32, 1)

    def forward(self, images, targets, flag):
        x = self.backbone(images)
        loss = nn.functional.smooth_l1_loss(self.box_head(x), targets)
        if flag:
            loss += self.output(x).abs().mean()
        return loss


def create_ddp_model(model, local_rank):
    if dist.get_world_size() == 1:
        return model
    return DistributedDataParallel(model, device_ids=[local_rank], broadcast_buffers=False)


def do_train(local_rank):
    model = create_ddp_model(MetaArch().cuda(local_rank), local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    dataset = DetectionSet()
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    for epoch in range(12):
        sampler.set_epoch(epoch)
        for images, targets, has_masks in loader:
            loss = model(images.cuda(local_rank), targets.cuda(local_rank), bool(has_masks.any()))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl")
    do_train(rank)
