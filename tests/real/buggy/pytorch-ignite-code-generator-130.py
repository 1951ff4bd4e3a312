# expect: missing-set-epoch
# source: https://github.com/pytorch-ignite/code-generator/pull/130
# reason: The generated distributed training template built its train loader on a shuffling DistributedSampler and ran several epochs without calling set_epoch; the merged fix calls sampler.set_epoch at the start of every epoch.
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler


def setup_data(config, train_dataset):
    sampler = DistributedSampler(train_dataset, num_replicas=dist.get_world_size(), rank=dist.get_rank(), shuffle=True)
    return DataLoader(train_dataset, batch_size=config["batch_size"], sampler=sampler, num_workers=config["num_workers"])


def run(local_rank, config, model, train_dataset):
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    model = nn.parallel.DistributedDataParallel(model.to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    loss_fn = nn.CrossEntropyLoss()
    train_loader = setup_data(config, train_dataset)
    for epoch in range(config["max_epochs"]):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
