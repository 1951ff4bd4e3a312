# expect: hardcoded-cuda0
# source: https://github.com/open-mmlab/mmengine/pull/665
# reason: Pretrained weights were loaded with map_location="cuda:0", so during DDP training every rank first put the checkpoint on GPU 0 and could run out of memory; the merged fix loads to the CPU.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as MMDistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class PretrainedInit:
    def __init__(self, checkpoint, map_location="cuda:0"):
        self.checkpoint = checkpoint
        self.map_location = map_location

    def __call__(self, module):
        state = torch.load(self.checkpoint, map_location=self.map_location)
        module.load_state_dict(state, strict=False)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    backbone = nn.Sequential(nn.Conv2d(3, 256, 7, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    PretrainedInit("checkpoints/backbone.pth", map_location="cuda:0")(backbone)
    model = nn.Sequential(backbone, nn.Linear(256, 80)).cuda()
    model = MMDistributedDataParallel(model, device_ids=[torch.cuda.current_device()], broadcast_buffers=False)
    data = TensorDataset(torch.randn(2000, 3, 224, 224), torch.randint(0, 80, (2000,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler, num_workers=4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    for epoch in range(12):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
