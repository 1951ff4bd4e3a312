# expect: logging-from-all-ranks
# source: https://github.com/kakaobrain/scrl/issues/5
# reason: The trainer's best-checkpoint save ran in every process, so all ranks wrote the same file at once and it came out corrupted ("file not found: archive/data/..." on load); the maintainer suggested guarding it with the main-process check and the reporter confirmed that fixed it.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def get_rank():
    if not dist.is_available() or not dist.is_initialized():
        return 0
    return dist.get_rank()


def is_main_process():
    return get_rank() == 0


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 128))
        self.model = DistributedDataParallel(net.cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=cfg["lr"], momentum=0.9)
        dataset = TensorDataset(torch.randn(2048, 3, 32, 32))
        self.sampler = DistributedSampler(dataset)
        self.loader = DataLoader(dataset, batch_size=cfg["batch_size"], sampler=self.sampler, drop_last=True)
        self.cur_epoch = 0
        self.best_loss = float("inf")

    def _save_checkpoint(self, tag):
        os.makedirs(self.cfg["save_dir"], exist_ok=True)
        save_path = f"{self.cfg['save_dir']}/checkpoint_{tag}.pth"
        state = {"tag": str(tag), "epoch": self.cur_epoch, "model": self.model.module.state_dict(),
                 "optimizer": self.optimizer.state_dict()}
        torch.save(state, save_path)

    def run(self):
        for epoch in range(self.cfg["epochs"]):
            self.cur_epoch = epoch
            self.sampler.set_epoch(epoch)
            for (x,) in self.loader:
                x = x.cuda(non_blocking=True)
                loss = -nn.functional.cosine_similarity(self.model(x), self.model(x.flip(-1))).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if loss.item() < self.best_loss:
                self.best_loss = loss.item()
                self._save_checkpoint("best")
            if is_main_process():
                self._save_checkpoint("last")


if __name__ == "__main__":
    Trainer({"lr": 0.1, "batch_size": 128, "epochs": 100, "save_dir": "./results"}).run()
