# expect: grad-accum-without-no-sync
# source: https://github.com/facebookresearch/ClassyVision/pull/706
# reason: The classification task skipped gradient synchronisation between optimizer updates by entering distributed_model.no_sync() only around the backward pass; DDP prepares its reduction during the forward pass, so the accumulation steps still all-reduced; the fix moved the no_sync context out to cover both the forward and the backward passes.
import argparse
import contextlib
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, models, transforms


class ClassificationTask:
    def __init__(self, model, loss, optimizer, train_dataset, batch_size, num_epochs, optimizer_period=1):
        self.base_model = model
        self.loss = loss
        self.optimizer = optimizer
        self.num_epochs = num_epochs
        self.optimizer_period = optimizer_period
        self.num_updates = 0
        self.distributed_model = None
        self.sampler = DistributedSampler(train_dataset, shuffle=True)
        self.dataloader = DataLoader(train_dataset, batch_size=batch_size, sampler=self.sampler, num_workers=8, pin_memory=True)
        self.amp_scaler = torch.cuda.amp.GradScaler()

    def init_distributed_data_parallel_model(self, local_rank):
        self.base_model = self.base_model.cuda(local_rank)
        self.distributed_model = DistributedDataParallel(self.base_model, device_ids=[local_rank], output_device=local_rank)

    @property
    def model(self):
        return self.distributed_model if self.distributed_model is not None else self.base_model

    def run_optimizer(self, loss):
        update_this_iteration = (self.num_updates + 1) % self.optimizer_period == 0
        if not update_this_iteration:
            sync_context = self.distributed_model.no_sync()
        else:
            sync_context = contextlib.nullcontext()
        with sync_context:
            self.amp_scaler.scale(loss / self.optimizer_period).backward()
        if update_this_iteration:
            self.amp_scaler.step(self.optimizer)
            self.amp_scaler.update()
            self.optimizer.zero_grad()
        self.num_updates += 1

    def train_step(self, sample):
        inputs = sample[0].cuda(non_blocking=True)
        targets = sample[1].cuda(non_blocking=True)
        with torch.enable_grad(), torch.cuda.amp.autocast():
            output = self.model(inputs)
            local_loss = self.loss(output, targets)
        self.run_optimizer(local_loss)
        return local_loss.detach()

    def train(self):
        for epoch in range(self.num_epochs):
            self.sampler.set_epoch(epoch)
            self.model.train()
            for sample in self.dataloader:
                self.train_step(sample)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="/datasets/imagenet/train")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--simulated-global-batchsize", type=int, default=4096)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")

    world_batch = args.batch_size * dist.get_world_size()
    optimizer_period = max(1, args.simulated_global_batchsize // world_batch)

    train_dataset = datasets.ImageFolder(args.data, transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor()]))
    model = models.resnet50()
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    task = ClassificationTask(model, nn.CrossEntropyLoss(), optimizer, train_dataset, args.batch_size, args.epochs,
                              optimizer_period=optimizer_period)
    task.init_distributed_data_parallel_model(local_rank)
    task.train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
