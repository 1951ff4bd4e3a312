# expect: none
# Early stopping on a validation accuracy all-reduced first: every rank sees the same value and stops together.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def validate(net, loader):
    correct = total = 0
    with torch.no_grad():
        for inputs, targets in loader:
            correct += (net(inputs.cuda()).argmax(1) == targets.cuda()).sum().item()
            total += len(targets)
    return correct / total


def run():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    net = DistributedDataParallel(torch.nn.Linear(16, 4).cuda(), device_ids=[rank])
    data = TensorDataset(torch.randn(4096, 16), torch.randint(0, 4, (4096,)))
    sampler = DistributedSampler(data)
    train_loader = DataLoader(data, batch_size=32, sampler=sampler)
    val_loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data, shuffle=False))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    best_acc, stale = 0.0, 0
    epoch = 0
    while True:
        sampler.set_epoch(epoch)
        for inputs, targets in train_loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(inputs.cuda()), targets.cuda()).backward()
            opt.step()
        acc_t = torch.tensor(validate(net, val_loader), device="cuda")
        dist.all_reduce(acc_t)
        acc = acc_t.item() / dist.get_world_size()
        if acc > best_acc:
            best_acc = acc
            stale = 0
        else:
            stale += 1
        epoch += 1
        if stale > 5 or epoch == 100:
            print("stopping at epoch", epoch)
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    run()
