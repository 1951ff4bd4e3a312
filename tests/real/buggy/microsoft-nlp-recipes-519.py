# expect: dataparallel
# source: https://github.com/microsoft/nlp-recipes/pull/519
# reason: The transformers fine-tuning helper wrapped the model in torch.nn.DataParallel whenever several GPUs were visible and then, for a distributed launch (local_rank != -1), wrapped that DataParallel model again in DistributedDataParallel, so every process drove all GPUs (the reviewer saw 4 GPUs busy when 2 were asked for); the merged fix makes DataParallel the non-distributed alternative (elif num_gpus > 1) only.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, RandomSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def get_device(num_gpus=None, local_rank=-1):
    if local_rank == -1:
        num_gpus = min(num_gpus or torch.cuda.device_count(), torch.cuda.device_count())
        device = torch.device("cuda" if num_gpus > 0 else "cpu")
    else:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        num_gpus = 1
    return device, num_gpus


class Transformer:
    def __init__(self, hidden=128, num_labels=2):
        self.model = nn.Sequential(nn.Embedding(5000, hidden), nn.Flatten(), nn.Linear(hidden * 64, num_labels))

    def prepare_model(self, device, num_gpus, local_rank=-1):
        self.model.to(device)
        if num_gpus > 1 or torch.cuda.device_count() > 1:
            self.model = torch.nn.DataParallel(self.model)
        if local_rank != -1:
            self.model = torch.nn.parallel.DistributedDataParallel(
                self.model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=True)
        return self.model

    def fine_tune(self, loader, device, num_epochs=1, lr=5e-5, local_rank=-1):
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        loss_fn = nn.CrossEntropyLoss()
        self.model.train()
        for epoch in range(num_epochs):
            if local_rank != -1:
                loader.sampler.set_epoch(epoch)
            for ids, labels in loader:
                ids, labels = ids.to(device), labels.to(device)
                loss = loss_fn(self.model(ids), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--num_gpus", type=int, default=None)
    args = parser.parse_args()

    if args.local_rank != -1:
        dist.init_process_group(backend="nccl")
    device, num_gpus = get_device(args.num_gpus, args.local_rank)

    data = TensorDataset(torch.randint(0, 5000, (2048, 64)), torch.randint(0, 2, (2048,)))
    sampler = RandomSampler(data) if args.local_rank == -1 else DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)

    classifier = Transformer()
    classifier.prepare_model(device, num_gpus, args.local_rank)
    classifier.fine_tune(loader, device, num_epochs=2, local_rank=args.local_rank)


if __name__ == "__main__":
    main()
