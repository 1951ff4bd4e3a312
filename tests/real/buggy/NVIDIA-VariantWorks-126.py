# expect: missing-distributed-sampler
# source: https://github.com/NVIDIA/VariantWorks/pull/126
# reason: Multi-GPU training launched one process per GPU with the local rank passed to the data layer, but the HDF data layer built its DataLoader with shuffle=True and no sampler, so every process iterated the whole training set; the merged fix adds a torch DistributedSampler to both data loaders when running distributed.
import argparse
import os

import h5py
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset


class HDFPileupDataset(Dataset):
    def __init__(self, filelist, tensor_keys):
        self.tensor_keys = tensor_keys
        self.index = []
        for path in filelist:
            with h5py.File(path, "r") as fh:
                self.index.extend((path, i) for i in range(len(fh[tensor_keys[0]])))

    def __len__(self):
        return len(self.index)

    def __getitem__(self, idx):
        path, row = self.index[idx]
        with h5py.File(path, "r") as fh:
            return tuple(torch.as_tensor(fh[key][row]) for key in self.tensor_keys)


class HDFDataLoader:
    """Data layer: wraps the pileup files into a loader for one training process."""

    def __init__(self, tensor_keys, filelist, batch_size=32, shuffle=True, num_workers=4, local_rank=None):
        self.local_rank = local_rank
        self.dataset = HDFPileupDataset(filelist, tensor_keys)
        self.dataloader = DataLoader(self.dataset, batch_size=batch_size, shuffle=shuffle,
                                     num_workers=num_workers, pin_memory=True)

    def __len__(self):
        return len(self.dataloader)

    def __iter__(self):
        return iter(self.dataloader)


class ConsensusRNN(nn.Module):
    def __init__(self, num_input_features=10, gru_size=128, num_output_logits=5):
        super().__init__()
        self.gru = nn.GRU(num_input_features, gru_size, num_layers=2, batch_first=True, bidirectional=True)
        self.classifier = nn.Linear(2 * gru_size, num_output_logits)

    def forward(self, encoding):
        out, _ = self.gru(encoding)
        return self.classifier(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-hdf", nargs="+", required=True)
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--local_rank", type=int, default=None)
    args = parser.parse_args()

    distributed = args.local_rank is not None
    if distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
        device = torch.device("cuda", args.local_rank)
    else:
        device = torch.device("cuda")

    train_layer = HDFDataLoader(("features", "labels"), args.train_hdf, batch_size=args.batch_size,
                                shuffle=True, local_rank=args.local_rank)
    model = ConsensusRNN().to(device)
    if distributed:
        model = DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        for features, labels in train_layer:
            logits = model(features.to(device).float())
            loss = criterion(logits.reshape(-1, logits.size(-1)), labels.to(device).long().reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if not distributed or dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
            torch.save(model.state_dict() if not distributed else model.module.state_dict(), f"consensus_{epoch}.pt")

    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
