# expect:
# seen-in: https://github.com/LiheYoung/UniMatch/blob/0324f3dd4a22128105a5eb135d2586c0bb3cc647/supervised.py
# The validation DistributedSampler keeps its default shuffle and is never re-seeded, but its loader is only handed
# to an evaluation function that reads it under no_grad and all-reduces the counts: the order does not matter.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def evaluate(model, loader):
    model.eval()
    correct = torch.zeros(2).cuda()
    with torch.no_grad():
        for images, labels in loader:
            predicted = model(images.cuda()).argmax(dim=1)
            correct += torch.tensor([(predicted == labels.cuda()).sum().item(), labels.numel()]).cuda()
    dist.all_reduce(correct)
    return (correct[0] / correct[1]).item()


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(16, 4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    train_set = TensorDataset(torch.randn(512, 16), torch.randint(0, 4, (512,)))
    val_set = TensorDataset(torch.randn(128, 16), torch.randint(0, 4, (128,)))
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=32, sampler=train_sampler, drop_last=True)
    val_sampler = DistributedSampler(val_set)
    val_loader = DataLoader(val_set, batch_size=1, sampler=val_sampler)
    for epoch in range(20):
        model.train()
        train_sampler.set_epoch(epoch)
        for images, labels in train_loader:
            loss = nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        accuracy = evaluate(model, val_loader)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: accuracy {accuracy:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
