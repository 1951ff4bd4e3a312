# expect: missing-set-epoch
# source: https://github.com/cszn/KAIR/pull/106
# reason: The merged fix sets the epoch on the DistributedSampler each epoch; without it the data order was identical in every epoch.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

opt = {
    "dist": True,
    "datasets": {"train": {"dataloader_shuffle": True, "dataloader_batch_size": 16, "dataloader_num_workers": 8}},
    "train": {"manual_seed": 42, "epochs": 1000},
}


def init_dist():
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group(backend="nccl")
    return rank, dist.get_world_size()


def main():
    rank, world = init_dist()
    dataset_opt = opt["datasets"]["train"]
    train_set = TensorDataset(torch.randn(4000, 3, 48, 48), torch.randn(4000, 3, 96, 96))
    train_sampler = DistributedSampler(train_set, shuffle=dataset_opt["dataloader_shuffle"], drop_last=True,
                                       seed=opt["train"]["manual_seed"])
    train_loader = DataLoader(train_set, batch_size=dataset_opt["dataloader_batch_size"] // world, shuffle=False,
                              num_workers=dataset_opt["dataloader_num_workers"] // world, drop_last=True,
                              pin_memory=True, sampler=train_sampler)
    netG = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 12, 3, padding=1),
                         nn.PixelShuffle(2)).to(torch.device("cuda", torch.cuda.current_device()))
    netG = DistributedDataParallel(netG, device_ids=[torch.cuda.current_device()])
    optimizer = torch.optim.Adam(netG.parameters(), lr=1e-4)
    current_step = 0
    for epoch in range(opt["train"]["epochs"]):
        for i, (L, H) in enumerate(train_loader):
            current_step += 1
            L, H = L.cuda(non_blocking=True), H.cuda(non_blocking=True)
            loss = nn.functional.l1_loss(netG(L), H)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
