# expect: grad-accum-without-no-sync
# source: https://github.com/modelscope/FunASR/pull/3472
# reason: The trainer skipped DDP's gradient all-reduce with no_sync() on the wrong micro-batches of an accumulation window (batch_idx % accum_grad == 0 was synchronised, the micro-batch before optimizer.step() was not), so each rank stepped on its own rank-local gradients; a maintainer reproduced it with two gloo ranks and approved the fix that keeps the non-final micro-batches inside no_sync().
import os
from contextlib import nullcontext

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Trainer:
    def __init__(self, model, optim, accum_grad=4, max_epoch=20):
        self.model = model
        self.optim = optim
        self.accum_grad = accum_grad
        self.max_epoch = max_epoch

    def train_epoch(self, dataloader_train, device):
        self.model.train()
        for batch_idx, (feats, targets) in enumerate(dataloader_train):
            feats, targets = feats.to(device), targets.to(device)
            my_context = self.model.no_sync if batch_idx % self.accum_grad != 0 else nullcontext
            with my_context():
                loss = nn.functional.cross_entropy(self.model(feats), targets) / self.accum_grad
                loss.backward()
            if (batch_idx + 1) % self.accum_grad == 0:
                nn.utils.clip_grad_norm_(self.model.parameters(), 10.0)
                self.optim.step()
                self.optim.zero_grad(set_to_none=True)

    def run(self, dataloader_train, sampler, device):
        for epoch in range(self.max_epoch):
            sampler.set_epoch(epoch)
            self.train_epoch(dataloader_train, device)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda", local_rank)
    model = nn.Sequential(nn.Linear(560, 512), nn.ReLU(), nn.Linear(512, 5000)).to(device)
    model = DDP(model, device_ids=[local_rank])
    optim = torch.optim.Adam(model.parameters(), lr=5e-4)
    data = TensorDataset(torch.randn(20000, 560), torch.randint(0, 5000, (20000,)))
    sampler = DistributedSampler(data, shuffle=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    Trainer(model, optim).run(loader, sampler, device)


if __name__ == "__main__":
    main()
