# expect: ddp-before-to-device
# source: https://github.com/pytorch/pytorch/issues/46821
# reason: DDP raised "device_ids and output_device arguments only work with single-device CUDA modules" because the model.cuda(args.gpu) line had been commented out; the maintainer's answer is to move the model to the GPU before wrapping.
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torchvision.models as models
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main_worker(gpu, ngpus_per_node, args):
    args.rank = args.rank * ngpus_per_node + gpu
    dist.init_process_group(backend="nccl", init_method=args.dist_url, world_size=args.world_size, rank=args.rank)
    model = models.resnet18()
    if args.gpu is not None or gpu is not None:
        torch.cuda.set_device(gpu)
        args.batch_size = int(args.batch_size / ngpus_per_node)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    data = TensorDataset(torch.randn(2000, 3, 224, 224), torch.randint(0, 1000, (2000,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, target in loader:
            loss = nn.functional.cross_entropy(model(images.cuda(gpu)), target.cuda(gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    p.add_argument("--world-size", type=int, default=1)
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--gpu", type=int, default=None)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--epochs", type=int, default=90)
    args = p.parse_args()
    ngpus = torch.cuda.device_count()
    args.world_size = ngpus * args.world_size
    mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))
