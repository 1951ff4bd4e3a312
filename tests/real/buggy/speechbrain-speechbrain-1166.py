# expect: collective-mismatch
# source: https://github.com/speechbrain/speechbrain/issues/1166
# reason: Intra-epoch checkpointing crashed DDP runs with an NCCL error: whether to checkpoint was decided by each process's own clock (minutes since the last checkpoint), so eventually one rank entered the saving block, whose run_on_main ends in a barrier, while the other went on to the next backward's all-reduce; the maintainer's fix (PR 1167) removed the barrier from that path.
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def if_main_process() -> bool:
    return int(os.environ.get("RANK", "0")) == 0


def ddp_barrier() -> None:
    if dist.is_initialized():
        dist.barrier()


def run_on_main(func, args=None, kwargs=None):
    if if_main_process():
        func(*(args or []), **(kwargs or {}))
    ddp_barrier()


class Brain:
    def __init__(self, modules, opt, ckpt_dir, ckpt_interval_minutes=15.0):
        self.modules = modules
        self.optimizer = opt
        self.ckpt_dir = ckpt_dir
        self.ckpt_interval_minutes = ckpt_interval_minutes
        self.step = 0

    def _save_intra_epoch_ckpt(self):
        path = os.path.join(self.ckpt_dir, f"CKPT-step{self.step}.pt")
        torch.save({"model": self.modules.module.state_dict(), "step": self.step}, path)

    def fit_batch(self, feats, targets):
        loss = nn.functional.ctc_loss(self.modules(feats).log_softmax(-1).transpose(0, 1), targets,
                                      torch.full((feats.size(0),), feats.size(1), dtype=torch.long),
                                      torch.full((feats.size(0),), targets.size(1), dtype=torch.long))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    def _fit_train(self, loader, sampler, epoch, device):
        sampler.set_epoch(epoch)
        last_ckpt_time = time.time()
        for feats, targets in loader:
            self.step += 1
            self.fit_batch(feats.to(device), targets.to(device))
            if self.ckpt_interval_minutes > 0 and time.time() - last_ckpt_time >= self.ckpt_interval_minutes * 60.0:
                run_on_main(self._save_intra_epoch_ckpt)
                last_ckpt_time = time.time()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    net = nn.Sequential(nn.Linear(80, 256), nn.ReLU(), nn.Linear(256, 32)).to(device)
    model = DDP(net, device_ids=[local_rank])
    data = TensorDataset(torch.randn(2000, 100, 80), torch.randint(1, 32, (2000, 20)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    brain = Brain(model, torch.optim.Adam(model.parameters(), lr=1e-3), "save", ckpt_interval_minutes=0.5)
    for epoch in range(10):
        brain._fit_train(loader, sampler, epoch, device)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
