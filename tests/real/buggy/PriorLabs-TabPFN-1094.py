# expect: hf-cache-contention
# source: https://github.com/PriorLabs/TabPFN/pull/1094
# reason: Under torchrun each rank called the sklearn dataset fetcher at start-up with a cold cache, so all ranks downloaded into the same data home at once and the run could crash; the merged fix lets rank 0 fetch first while the others wait.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from sklearn.datasets import fetch_covtype
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def setup():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return local_rank


def load_data():
    X, y = fetch_covtype(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y - 1, test_size=0.2, random_state=42)
    return (TensorDataset(torch.tensor(X_train, dtype=torch.float32), torch.tensor(y_train)),
            TensorDataset(torch.tensor(X_test, dtype=torch.float32), torch.tensor(y_test)))


def main():
    local_rank = setup()
    device = torch.device("cuda", local_rank)
    train_set, _ = load_data()
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=512, sampler=sampler)
    model = nn.Sequential(nn.Linear(54, 256), nn.GELU(), nn.Linear(256, 7)).to(device)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
