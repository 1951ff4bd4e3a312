# expect: unused-parameters-error
# source: https://github.com/aliyun/conditional-lane-detection/issues/29
# reason: Training failed with "Expected to have finished reduction in the prior iteration"; users fixed it by turning on find_unused_parameters because part of the model produced no loss.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class CondLaneNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.ReLU(), nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU())
        self.proposal_head = nn.Conv2d(128, 1, 1)
        self.row_head = nn.Conv2d(128, 1, 1)
        self.offset_head = nn.Conv2d(128, 2, 1)  # built from the config, never used by forward_train

    def forward(self, img):
        feat = self.backbone(img)
        return self.proposal_head(feat), self.row_head(feat)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = CondLaneNet().cuda()
    model = DistributedDataParallel(model, device_ids=[torch.cuda.current_device()], broadcast_buffers=False,
                                    find_unused_parameters=False)
    data = TensorDataset(torch.randn(3000, 3, 320, 800), torch.randn(3000, 1, 80, 200), torch.randn(3000, 1, 80, 200))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler, num_workers=4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(16):
        sampler.set_epoch(epoch)
        for img, heat, row in loader:
            pred_heat, pred_row = model(img.cuda())
            loss = nn.functional.mse_loss(pred_heat, heat.cuda()) + nn.functional.mse_loss(pred_row, row.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
