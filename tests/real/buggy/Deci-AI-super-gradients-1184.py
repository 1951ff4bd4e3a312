# expect: checkpoint-without-module
# source: https://github.com/Deci-AI/super-gradients/pull/1184
# reason: Checkpoints saved under DDP/DP carried the wrapper's "module." prefix, which the maintainers call a broken design; the merged PR unwraps the model before taking its state_dict.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Trainer:
    def __init__(self, net, ckpt_dir):
        self.net = net
        self.ckpt_dir = ckpt_dir
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))

    def _initialize_device(self):
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group(backend="nccl")
        self.device = torch.device("cuda", self.local_rank)
        self.net = DistributedDataParallel(self.net.to(self.device), device_ids=[self.local_rank])

    def _save_checkpoint(self, epoch, metric):
        state = {"net": self.net.state_dict(), "epoch": epoch, "acc": metric}
        if dist.get_rank() == 0:
            torch.save(state, os.path.join(self.ckpt_dir, "ckpt_latest.pth"))

    def train(self, dataset, max_epochs):
        self._initialize_device()
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=4)
        optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        for epoch in range(max_epochs):
            sampler.set_epoch(epoch)
            for x, y in loader:
                loss = nn.functional.cross_entropy(self.net(x.to(self.device)), y.to(self.device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            self._save_checkpoint(epoch, -loss.item())
        dist.destroy_process_group()


if __name__ == "__main__":
    Trainer(nn.Linear(3 * 32 * 32, 10), "checkpoints").train(
        TensorDataset(torch.randn(5000, 3 * 32 * 32), torch.randint(0, 10, (5000,))), 100)
