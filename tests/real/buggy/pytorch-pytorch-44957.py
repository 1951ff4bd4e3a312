# expect: collective-mismatch
# source: https://github.com/pytorch/pytorch/issues/44957
# reason: Training hung in SyncBatchNorm: the video model skipped one sub-network on the first frame of each clip (`if self.iter != 0`), and since the ranks reach a clip's first frame at different steps, one rank skipped the sub-network's SyncBatchNorm while another ran it; the maintainer: every rank must call SyncBatchNorm the same number of times. The reporter's fix was to always run the sub-network.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class FrameDataset(Dataset):
    """Frames of variable-length clips, in order; item = (frame, target, index of the frame in its clip)."""

    def __init__(self, num_clips=200):
        g = torch.Generator().manual_seed(0)
        self.items = []
        for _ in range(num_clips):
            length = int(torch.randint(4, 30, (1,), generator=g))
            self.items += [(torch.randn(3, 64, 64), torch.rand(1, 64, 64), t) for t in range(length)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.modelA = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.Conv2d(32, 1, 1))
        self.modelB = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.Conv2d(32, 1, 1))
        self.iter = 0

    def forward(self, frame):
        if self.iter != 0:
            stuff = self.modelA(frame)
            return self.modelB(stuff)
        return self.modelA(frame)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net = nn.SyncBatchNorm.convert_sync_batchnorm(Tracker()).cuda()
    model = DDP(net, device_ids=[local_rank], find_unused_parameters=True)
    data = FrameDataset()
    sampler = DistributedSampler(data, shuffle=False)
    loader = DataLoader(data, batch_size=1, sampler=sampler)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for frame, target, t in loader:
            model.module.iter = int(t)
            loss = nn.functional.mse_loss(model(frame.cuda()), target.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
