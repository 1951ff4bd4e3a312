# expect:
# seen-in: https://github.com/jaywalnut310/vits/blob/2e561ba58618d021b5b8323d3765880f7e0ecfdb/train.py
# A map-style dataset computes a spectrogram on first read and saves it next to the clip; the DistributedSampler gives
# each clip to one rank per epoch, so each cache file has one writer (per sample, not one shared file).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class ClipFeatures(Dataset):
    def __init__(self, folder):
        self.clips = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".wav"))

    def __len__(self):
        return len(self.clips)

    def features(self, clip):
        stored = clip[:-4] + ".feat.pt"
        if os.path.exists(stored):
            return torch.load(stored)
        feat = torch.randn(16)
        torch.save(feat, stored)
        return feat

    def pair(self, clip):
        return self.features(clip), torch.tensor([1.0])

    def __getitem__(self, index):
        return self.pair(self.clips[index])


def main():
    dist.init_process_group("nccl")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    data = ClipFeatures("clips")
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler, num_workers=2)
    net = DDP(nn.Linear(16, 1).cuda(), device_ids=[local])
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for feat, target in loader:
            loss = nn.functional.mse_loss(net(feat.cuda()), target.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
