import os

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from vitpkg.utils import dist_barrier, get_dist_local_rank, is_master


class Trainer:
    def __init__(self, path):
        self.path = path
        local_rank = get_dist_local_rank()
        self.network = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
        self.optimizer = torch.optim.SGD(self.network.parameters(), lr=0.1)
        data = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
        self.sampler = DistributedSampler(data)
        self.loader = DataLoader(data, batch_size=16, sampler=self.sampler)

    def save_model(self, model_name):
        if is_master():
            os.makedirs(self.path, exist_ok=True)
            torch.save({"state_dict": self.network.module.state_dict()}, os.path.join(self.path, model_name))

    def sync_model(self):
        self.save_model(model_name="sync.pt")
        dist_barrier()
        checkpoint = torch.load(os.path.join(self.path, "sync.pt"), map_location="cpu")
        dist_barrier()
        self.network.module.load_state_dict(checkpoint["state_dict"])

    def train(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for inputs, targets in self.loader:
                loss = nn.functional.cross_entropy(self.network(inputs.cuda()), targets.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self.sync_model()
        torch.distributed.destroy_process_group()
