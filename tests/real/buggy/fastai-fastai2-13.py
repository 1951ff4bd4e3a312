# expect: logging-from-all-ranks
# source: https://github.com/fastai/fastai2/issues/13
# reason: The TensorBoard callback created its SummaryWriter in every distributed process, so all ranks raced to create the same run directory and crashed with FileExistsError; the maintainer fixed it by running the callback only in the master process.
import os
from datetime import datetime

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter


class TensorBoardCallback:
    def __init__(self, log_dir=None):
        self.log_dir = log_dir or os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S"))
        self.writer = None

    def before_fit(self, learner):
        self.writer = SummaryWriter(log_dir=self.log_dir)

    def after_batch(self, learner):
        self.writer.add_scalar("train_loss", learner.loss.item(), learner.iteration)

    def after_fit(self, learner):
        self.writer.close()


class Learner:
    def __init__(self, model, loader, sampler, callbacks):
        self.model, self.loader, self.sampler, self.callbacks = model, loader, sampler, callbacks
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.iteration = 0

    def fit(self, n_epoch):
        for cb in self.callbacks:
            cb.before_fit(self)
        for epoch in range(n_epoch):
            self.sampler.set_epoch(epoch)
            for xb, yb in self.loader:
                self.loss = nn.functional.cross_entropy(self.model(xb.cuda()), yb.cuda())
                self.opt.zero_grad()
                self.loss.backward()
                self.opt.step()
                self.iteration += 1
                for cb in self.callbacks:
                    cb.after_batch(self)
        for cb in self.callbacks:
            cb.after_fit(self)


def main():
    gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(gpu)
    dist.init_process_group(backend="nccl", init_method="env://")
    model = DDP(nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).cuda(), device_ids=[gpu])
    dataset = TensorDataset(torch.randn(6000, 1, 28, 28), torch.randint(0, 10, (6000,)))
    sampler = DistributedSampler(dataset)
    learner = Learner(model, DataLoader(dataset, batch_size=64, sampler=sampler), sampler, [TensorBoardCallback()])
    learner.fit(5)


if __name__ == "__main__":
    main()
