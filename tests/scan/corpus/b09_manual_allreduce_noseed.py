# expect: unsynced-init-seed
# Hand-rolled data parallelism on CPU with gloo: gradients are averaged, weights never synced.
import torch
import torch.distributed as dist
import torch.nn as nn


def average_gradients(net):
    world = dist.get_world_size()
    for p in net.parameters():
        dist.all_reduce(p.grad.data, op=dist.ReduceOp.SUM)
        p.grad.data /= world


def run(rank, size):
    dist.init_process_group("gloo", rank=rank, world_size=size)
    net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    for step in range(50):
        x = torch.randn(32, 4)
        loss = (net(x) - x.sum(1, keepdim=True)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        average_gradients(net)
        opt.step()
    dist.destroy_process_group()
