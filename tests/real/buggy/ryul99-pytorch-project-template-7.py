# expect: checkpoint-without-module
# source: https://github.com/ryul99/pytorch-project-template/pull/7
# reason: The template's Model class wraps its network in DDP and saved self.net.state_dict(), whose keys carry the wrapper's "module." prefix, so loading the checkpoint into the plain network (inference, single-GPU resume) failed; the merged hotfix saves the unwrapped network's state dict.
import os
import os.path as osp

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 28 * 28, 10))

    def forward(self, x):
        return self.conv(x)


class Model:
    def __init__(self, cfg, net_arch, loss_f, rank=0):
        self.cfg = cfg
        self.device = cfg["device"]
        self.rank = rank
        self.net = net_arch.to(self.device)
        if cfg["gpus"] != 0:
            self.net = DDP(self.net, device_ids=[self.rank])
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-3)
        self.loss_f = loss_f
        self.step = 0

    def optimize_parameters(self, x, y):
        self.net.train()
        self.optimizer.zero_grad()
        loss = self.loss_f(self.net(x.to(self.device)), y.to(self.device))
        loss.backward()
        self.optimizer.step()
        self.step += 1
        return loss.item()

    def save_network(self):
        if self.rank == 0:
            state_dict = self.net.state_dict()
            for key, param in state_dict.items():
                state_dict[key] = param.to("cpu")
            torch.save(state_dict, osp.join(self.cfg["chkpt_dir"], f"{self.cfg['name']}_{self.step}.pt"))

    def load_network(self, path):
        self.net.load_state_dict(torch.load(path, map_location=self.device))


def train_loop(rank, cfg):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group("nccl", rank=rank, world_size=cfg["gpus"])
    torch.cuda.set_device(rank)
    cfg["device"] = f"cuda:{rank}"
    data = TensorDataset(torch.randn(6000, 1, 28, 28), torch.randint(0, 10, (6000,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    model = Model(cfg, Net(), nn.CrossEntropyLoss(), rank)
    for epoch in range(cfg["epochs"]):
        sampler.set_epoch(epoch)
        for x, y in loader:
            model.optimize_parameters(x, y)
        model.save_network()
    dist.destroy_process_group()


def test_model(path):
    net = Net()
    net.load_state_dict(torch.load(path, map_location="cpu"))
    return net


if __name__ == "__main__":
    cfg = {"gpus": torch.cuda.device_count(), "epochs": 5, "name": "mnist", "chkpt_dir": "chkpt"}
    mp.spawn(train_loop, nprocs=cfg["gpus"], args=(cfg,), join=True)
