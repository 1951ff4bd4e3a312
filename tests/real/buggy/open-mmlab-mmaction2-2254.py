# expect: hardcoded-cuda0
# source: https://github.com/open-mmlab/mmaction2/pull/2254
# reason: The runner's checkpoint helper called torch.load without map_location, so in distributed training every process first restored the checkpoint onto cuda:0 (the device it was saved from); the merged fix maps the checkpoint to the CPU.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def _load_checkpoint(filename):
    return torch.load(filename)


def load_pretrained(model, filename):
    checkpoint = _load_checkpoint(filename)
    state_dict = checkpoint.get("state_dict", checkpoint)
    model.load_state_dict(state_dict, strict=False)


class Recognizer(nn.Module):
    def __init__(self, num_classes=400):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv3d(3, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool3d(1), nn.Flatten())
        self.cls_head = nn.Linear(64, num_classes)

    def forward(self, clips):
        return self.cls_head(self.backbone(clips))


class Runner:
    def __init__(self, cfg):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group(backend="nccl")
        model = Recognizer()
        if cfg.get("load_from"):
            load_pretrained(model, cfg["load_from"])
        self.model = DistributedDataParallel(model.cuda(), device_ids=[self.local_rank])
        dataset = TensorDataset(torch.randn(256, 3, 8, 32, 32), torch.randint(0, 400, (256,)))
        self.sampler = DistributedSampler(dataset)
        self.loader = DataLoader(dataset, batch_size=8, sampler=self.sampler)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.max_epochs = cfg["max_epochs"]

    def train(self):
        for epoch in range(self.max_epochs):
            self.sampler.set_epoch(epoch)
            for clips, labels in self.loader:
                loss = nn.functional.cross_entropy(self.model(clips.cuda()), labels.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


if __name__ == "__main__":
    Runner({"load_from": "tsn_r50_kinetics400.pth", "max_epochs": 100}).train()
