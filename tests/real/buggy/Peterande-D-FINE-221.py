# expect: hf-cache-contention
# source: https://github.com/Peterande/D-FINE/pull/221
# reason: Multi-GPU DDP training hung while loading the pretrained backbone: every rank downloaded the weights from the URL into the same cache at once; the merged fix lets rank 0 download, synchronises with a barrier, then loads the cached file on every rank.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

PRETRAINED_URL = "https://github.com/Peterande/storage/releases/download/dfinev1.0/PPHGNetV2_B4_stage1.pth"


class HGNetv2(nn.Module):
    def __init__(self, pretrained=True, local_model_dir="weight/hgnetv2/"):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU())
        self.stages = nn.Sequential(nn.Conv2d(32, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU())
        if pretrained:
            state = torch.hub.load_state_dict_from_url(PRETRAINED_URL, map_location="cpu", model_dir=local_model_dir)
            self.load_state_dict(state, strict=False)

    def forward(self, x):
        return self.stages(self.stem(x))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = nn.Sequential(HGNetv2(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 80))
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model).cuda()
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2.5e-4)
    data = TensorDataset(torch.randn(1000, 3, 320, 320), torch.randint(0, 80, (1000,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    for epoch in range(72):
        sampler.set_epoch(epoch)
        for images, labels in loader:
            loss = nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
