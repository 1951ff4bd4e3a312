# expect: missing-set-epoch
# source: https://github.com/huggingface/transformers/issues/4398
# reason: The Trainer's epoch loop iterated a DataLoader built on a shuffling DistributedSampler without calling set_epoch, so every epoch replayed the same order on every rank; confirmed by the maintainers and fixed by the distributed-eval rework that calls train_dataloader.sampler.set_epoch(epoch).
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class SimpleTrainer:
    def __init__(self, model, train_dataset, batch_size=8, num_train_epochs=3):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.model = DistributedDataParallel(model.cuda(self.local_rank), device_ids=[self.local_rank])
        self.train_dataset = train_dataset
        self.batch_size = batch_size
        self.num_train_epochs = num_train_epochs
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=5e-5)

    def get_train_dataloader(self):
        train_sampler = DistributedSampler(self.train_dataset)
        return DataLoader(self.train_dataset, batch_size=self.batch_size, sampler=train_sampler)

    def train(self):
        train_dataloader = self.get_train_dataloader()
        for epoch in range(self.num_train_epochs):
            for step, inputs in enumerate(train_dataloader):
                loss = self.model(**inputs)[0]
                loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()


def main(model, dataset):
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    SimpleTrainer(model, dataset).train()
