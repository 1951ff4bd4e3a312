# expect: checkpoint-without-module
# source: https://github.com/deepchem/deepchem/pull/4201
# reason: Models trained with DDP were saved with "module."-prefixed keys that single-GPU code could not load; the merged PR strips the wrapper when saving and loading.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class TorchModel:
    def __init__(self, model, model_dir):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.device = torch.device("cuda", self.local_rank)
        self.model = DDP(model.to(self.device), device_ids=[self.local_rank])
        self.model_dir = model_dir
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def save_checkpoint(self, step):
        if dist.get_rank() == 0:
            data = {"model_state_dict": self.model.state_dict(),
                    "optimizer_state_dict": self.optimizer.state_dict(), "global_step": step}
            torch.save(data, os.path.join(self.model_dir, "checkpoint.pt"))

    def fit(self, dataset, nb_epoch=10, checkpoint_interval=100):
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=100, sampler=sampler)
        step = 0
        for epoch in range(nb_epoch):
            sampler.set_epoch(epoch)
            for x, y in loader:
                loss = nn.functional.mse_loss(self.model(x.to(self.device)), y.to(self.device))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                step += 1
                if step % checkpoint_interval == 0:
                    self.save_checkpoint(step)
        dist.destroy_process_group()


if __name__ == "__main__":
    tm = TorchModel(nn.Sequential(nn.Linear(1024, 500), nn.ReLU(), nn.Linear(500, 1)), "models")
    tm.fit(TensorDataset(torch.randn(20000, 1024), torch.randn(20000, 1)))
