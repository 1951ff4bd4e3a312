# expect: unused-parameters-error
# source: https://github.com/pytorch/pytorch/issues/22436
# reason: The DDP-wrapped domain-adaptation model returned predictions for the source and the target batch, but the loss used only the source predictions; the target branch's parameters never got a gradient and the next iteration raised 'Expected to have finished reduction in the prior iteration' (a maintainer pointed out tgt_pred never reaches the loss; return only what the loss uses).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class AdaptNet(nn.Module):
    def __init__(self, n_classes=31):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(2048, 512), nn.ReLU())
        self.src_classifier = nn.Linear(512, n_classes)
        self.tgt_classifier = nn.Linear(512, n_classes)

    def forward(self, src, tgt):
        src_pred = self.src_classifier(self.features(src))
        tgt_pred = self.tgt_classifier(self.features(tgt))
        return src_pred, tgt_pred


def main():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(AdaptNet().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    source = TensorDataset(torch.randn(4000, 2048), torch.randint(0, 31, (4000,)))
    target = TensorDataset(torch.randn(4000, 2048))
    src_sampler, tgt_sampler = DistributedSampler(source), DistributedSampler(target)
    src_loader = DataLoader(source, batch_size=32, sampler=src_sampler, drop_last=True)
    tgt_loader = DataLoader(target, batch_size=32, sampler=tgt_sampler, drop_last=True)
    for epoch in range(50):
        src_sampler.set_epoch(epoch)
        tgt_sampler.set_epoch(epoch)
        for (src_x, src_y), (tgt_x,) in zip(src_loader, tgt_loader):
            src_pred, tgt_pred = model(src_x.cuda(), tgt_x.cuda())
            loss = F.cross_entropy(src_pred, src_y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
