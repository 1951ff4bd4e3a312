# expect:
# seen-in: https://github.com/pytorch/examples/blob/77f55b912142e11fcfdf5b530231fb9c52f181e8/imagenet/main.py
# mp.spawn with one process per GPU; the first process of each node saves: "args.rank % ngpus_per_node == 0".
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main_worker(gpu, ngpus_per_node, args):
    args.gpu = gpu
    args.rank = args.rank * ngpus_per_node + gpu
    torch.cuda.set_device(args.gpu)
    dist.init_process_group(backend="nccl", init_method=args.dist_url, world_size=args.world_size, rank=args.rank)
    model = nn.Linear(128, 10).cuda(args.gpu)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    data = TensorDataset(torch.randn(4096, 128), torch.randint(0, 10, (4096,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=args.batch_size // ngpus_per_node, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, target in loader:
            loss = nn.functional.cross_entropy(model(images.cuda(args.gpu)), target.cuda(args.gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if args.rank % ngpus_per_node == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
            torch.save({"epoch": epoch + 1, "state_dict": model.module.state_dict()}, "checkpoint.pth.tar")
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    p.add_argument("--world-size", type=int, default=1)
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--epochs", type=int, default=90)
    args = p.parse_args()
    ngpus_per_node = torch.cuda.device_count()
    args.world_size = ngpus_per_node * args.world_size
    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))


if __name__ == "__main__":
    main()
