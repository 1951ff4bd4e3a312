# expect: missing-set-device
# source: https://github.com/pytorch/examples/pull/1142
# reason: The merged PR adds torch.cuda.set_device(LOCAL_RANK) to the DDP examples: without it every process also works on GPU 0 (hangs, extra memory on GPU 0).
import os

import torch
import torch.nn as nn
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def ddp_setup():
    init_process_group(backend="nccl")


class Trainer:
    def __init__(self, model, train_data, optimizer, save_every):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = model.to(self.gpu_id)
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.model = DDP(self.model, device_ids=[self.gpu_id])

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        loss = nn.functional.cross_entropy(self.model(source), targets)
        loss.backward()
        self.optimizer.step()

    def _run_epoch(self, epoch):
        self.train_data.sampler.set_epoch(epoch)
        for source, targets in self.train_data:
            self._run_batch(source.to(self.gpu_id), targets.to(self.gpu_id))

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)
            if self.gpu_id == 0 and epoch % self.save_every == 0:
                torch.save(self.model.module.state_dict(), "checkpoint.pt")


def main(total_epochs=10, save_every=2, batch_size=32):
    ddp_setup()
    dataset = TensorDataset(torch.randn(2048, 20), torch.randint(0, 4, (2048,)))
    loader = DataLoader(dataset, batch_size=batch_size, pin_memory=True, shuffle=False, sampler=DistributedSampler(dataset))
    model = nn.Linear(20, 4)
    trainer = Trainer(model, loader, torch.optim.SGD(model.parameters(), lr=1e-3), save_every)
    trainer.train(total_epochs)
    destroy_process_group()


if __name__ == "__main__":
    main()
