# expect: no-barrier-before-checkpoint-load
# source: https://github.com/Intellindust-AI-Lab/DEIMv2/issues/135
# reason: At the stage switch every rank reloads the best stage-1 checkpoint that only the main process writes (a save-on-master helper after evaluation); nothing makes the other ranks wait for that write, so they read a half-written file ("EOFError: Ran out of input"). The answer in the thread adds a barrier before the load.
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def is_dist_available_and_initialized():
    return dist.is_available() and dist.is_initialized()


def get_rank():
    return dist.get_rank() if is_dist_available_and_initialized() else 0


def is_main_process():
    return get_rank() == 0


def save_on_master(obj, path):
    if is_main_process():
        torch.save(obj, path)


class DetSolver:
    def __init__(self, output_dir, epochs=72, stop_epoch=60):
        self.output_dir = Path(output_dir)
        self.epochs, self.stop_epoch = epochs, stop_epoch
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        self.device = torch.device("cuda", local_rank)
        detector = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.LazyLinear(4)).to(self.device)
        self.model = nn.parallel.DistributedDataParallel(detector, device_ids=[local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=2e-4)
        data = TensorDataset(torch.randn(512, 3, 32, 32), torch.randn(512, 4))
        self.sampler = DistributedSampler(data)
        self.train_dataloader = DataLoader(data, batch_size=16, sampler=self.sampler)
        self.best_stat = float("inf")

    def state_dict(self):
        return {"model": self.model.module.state_dict(), "optimizer": self.optimizer.state_dict()}

    def load_resume_state(self, path):
        state = torch.load(path, map_location="cpu")
        self.model.module.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])

    def train_one_epoch(self):
        self.model.train()
        total = torch.zeros(1, device=self.device)
        for images, boxes in self.train_dataloader:
            loss = nn.functional.l1_loss(self.model(images.to(self.device)), boxes.to(self.device))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.detach()
        dist.all_reduce(total)
        return total.item()

    def fit(self):
        for epoch in range(self.epochs):
            self.sampler.set_epoch(epoch)
            if epoch == self.stop_epoch:
                self.load_resume_state(str(self.output_dir / "best_stg1.pth"))
            stat = self.train_one_epoch()
            if stat < self.best_stat:
                self.best_stat = stat
                name = "best_stg1.pth" if epoch < self.stop_epoch else "best_stg2.pth"
                save_on_master(self.state_dict(), self.output_dir / name)


if __name__ == "__main__":
    DetSolver("outputs/deim").fit()
