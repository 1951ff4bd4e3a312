# expect:
# seen-in: https://github.com/Lightning-Universe/lightning-bolts/blob/34958a8892d42714edf02ba896fd5861ebb3cb7e/src/pl_bolts/models/self_supervised/swav/swav_module.py
# A module keeps a feature queue per rank: the set-up hook names the file after the global rank, the epoch-end hook
# saves to that attribute on every rank. Each rank writes its own file: no shared checkpoint is torn.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class FeatureQueue:
    def __init__(self, folder, length, dim):
        self.folder = folder
        self.queue = torch.zeros(length, dim)
        self.queue_path = "queue"

    def on_train_start(self):
        os.makedirs(self.folder, exist_ok=True)
        self.queue_path = os.path.join(self.folder, "queue" + str(dist.get_rank()) + ".pth")
        if os.path.isfile(self.queue_path):
            self.queue = torch.load(self.queue_path)["queue"]

    def on_train_epoch_end(self):
        torch.save({"queue": self.queue}, self.queue_path)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    queue = FeatureQueue("queues", 64, 2)
    queue.on_train_start()
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            loss = nn.functional.cross_entropy(model(inputs.cuda()), targets.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        queue.on_train_epoch_end()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
