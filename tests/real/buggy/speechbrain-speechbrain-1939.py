# expect: collective-mismatch
# source: https://github.com/speechbrain/speechbrain/issues/1939
# reason: With DDP, the training loop asked an EpochCounterWithStopper whether to stop using this process's own validation loss, which was never reduced across processes: when one GPU hit the early-stop condition and the other did not, the stopped process left the epoch loop and the other waited in the next ALLREDUCE until the NCCL watchdog timeout; a maintainer confirmed the stop decision was taken per process and the fix made the validation metrics update on all processes.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class EpochCounterWithStopper:
    def __init__(self, limit, limit_to_stop=5, limit_warmup=10, direction="min"):
        self.current = 0
        self.limit = limit
        self.limit_to_stop = limit_to_stop
        self.limit_warmup = limit_warmup
        self.sign = 1 if direction == "min" else -1
        self.best_limit = 0
        self.min_delta = 1e-6
        self.best_score = None

    def __iter__(self):
        return self

    def __next__(self):
        if self.current < self.limit:
            self.current += 1
            return self.current
        raise StopIteration

    def should_stop(self, current, current_metric):
        should_stop = False
        if current > self.limit_warmup:
            if self.best_score is None or self.sign * (current_metric - self.best_score) < -self.min_delta:
                self.best_limit, self.best_score = current, current_metric
            should_stop = (current - self.best_limit) >= self.limit_to_stop
        return should_stop


class Brain:
    def __init__(self, modules, opt_class, device):
        self.device = device
        self.modules = DDP(modules.to(device), device_ids=[device.index])
        self.optimizer = opt_class(self.modules.parameters())

    def fit_batch(self, batch):
        feats, targets = (t.to(self.device) for t in batch)
        loss = F.cross_entropy(self.modules(feats), targets)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    @torch.no_grad()
    def evaluate_batch(self, batch):
        feats, targets = (t.to(self.device) for t in batch)
        return F.cross_entropy(self.modules(feats), targets)

    def fit(self, epoch_counter, train_set, valid_set):
        train_sampler = DistributedSampler(train_set)
        train_loader = DataLoader(train_set, batch_size=16, sampler=train_sampler)
        valid_loader = DataLoader(valid_set, batch_size=16, sampler=DistributedSampler(valid_set, shuffle=False))
        for epoch in epoch_counter:
            train_sampler.set_epoch(epoch)
            self.modules.train()
            for batch in train_loader:
                self.fit_batch(batch)
            self.modules.eval()
            valid_loss = 0.0
            for step, batch in enumerate(valid_loader, 1):
                valid_loss += (self.evaluate_batch(batch).item() - valid_loss) / step
            if epoch_counter.should_stop(current=epoch, current_metric=valid_loss):
                epoch_counter.current = epoch_counter.limit
                break


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    train_set = TensorDataset(torch.randn(6000, 40), torch.randint(0, 10, (6000,)))
    valid_set = TensorDataset(torch.randn(600, 40), torch.randint(0, 10, (600,)))
    model = nn.Sequential(nn.Linear(40, 256), nn.ReLU(), nn.Linear(256, 10))
    brain = Brain(model, lambda params: torch.optim.Adam(params, lr=1e-3), torch.device("cuda", local_rank))
    brain.fit(EpochCounterWithStopper(limit=100, limit_to_stop=5, limit_warmup=10), train_set, valid_set)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
