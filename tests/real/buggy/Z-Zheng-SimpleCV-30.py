# expect: hardcoded-cuda0
# source: https://github.com/Z-Zheng/SimpleCV/pull/30
# reason: When a DDP run resumes, every rank loads the last checkpoint with torch.load(filepath) and no map_location, so the tensors go back to the GPU they were saved from (cuda:0) on every rank; the merged fix loads with map_location=torch.device("cpu").
import argparse
import json
import os
from collections import OrderedDict

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def get_rank():
    if not dist.is_available() or not dist.is_initialized():
        return 0
    return dist.get_rank()


class CheckPoint:
    MODEL = "model"
    OPTIMIZER = "opt"
    GLOBALSTEP = "global_step"
    INFO = "checkpoint_info.json"

    def __init__(self, launcher):
        self._launcher = launcher
        self.global_step = 0

    def save(self):
        ckpt = OrderedDict({
            CheckPoint.MODEL: self._launcher.model.state_dict(),
            CheckPoint.OPTIMIZER: self._launcher.optimizer.state_dict(),
            CheckPoint.GLOBALSTEP: self.global_step,
        })
        filename = "model-{}.pth".format(self.global_step)
        torch.save(ckpt, os.path.join(self._launcher.model_dir, filename))
        with open(os.path.join(self._launcher.model_dir, CheckPoint.INFO), "w") as f:
            json.dump({"last": filename}, f)

    @staticmethod
    def load(filepath):
        ckpt = torch.load(filepath)
        return ckpt

    def try_resume(self):
        info_path = os.path.join(self._launcher.model_dir, CheckPoint.INFO)
        if not os.path.exists(info_path):
            return
        with open(info_path) as f:
            last = json.load(f)["last"]
        ckpt = self.load(os.path.join(self._launcher.model_dir, last))
        self._launcher.model.load_state_dict(ckpt[CheckPoint.MODEL])
        self._launcher.optimizer.load_state_dict(ckpt[CheckPoint.OPTIMIZER])
        self.global_step = ckpt[CheckPoint.GLOBALSTEP]


class Launcher:
    def __init__(self, model_dir, model, optimizer):
        self.model_dir = model_dir
        self.model = model
        self.optimizer = optimizer
        self._master = get_rank() == 0
        self._device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
        self._ckpt = CheckPoint(self)

    def init(self):
        if self._master:
            os.makedirs(self.model_dir, exist_ok=True)
        self._ckpt.try_resume()

    def train_epochs(self, loader, num_epochs):
        self.init()
        for epoch in range(num_epochs):
            loader.sampler.set_epoch(epoch)
            for x, y in loader:
                x, y = x.to(self._device), y.to(self._device)
                loss = nn.functional.cross_entropy(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self._ckpt.global_step += 1
        if self._master:
            self._ckpt.save()


def run(local_rank, model_dir):
    model = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 4))
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    model.to(torch.device("cuda"))
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)

    dataset = TensorDataset(torch.randn(1024, 16), torch.randint(0, 4, (1024,)))
    loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    Launcher(model_dir, model, optimizer).train_epochs(loader, num_epochs=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int)
    parser.add_argument("--model_dir", default="./log")
    args = parser.parse_args()
    run(args.local_rank, args.model_dir)
