# expect: collective-mismatch
# source: https://github.com/pytorch/pytorch/issues/44353
# reason: With DDP and SyncBatchNorm, a CUDA out-of-memory error caught on one process skipped that batch (zero_grad and go on) while the other processes ran its forward/backward collectives, so they blocked; a maintainer confirmed that skipping communication on one rank desynchronises the collectives and hangs.
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def build_model():
    net = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10),
    )
    return nn.SyncBatchNorm.convert_sync_batchnorm(net)


def worker(gpu, args):
    dist.init_process_group("nccl", init_method=args.dist_url, world_size=args.world_size, rank=gpu)
    torch.cuda.set_device(gpu)
    model = build_model().cuda(gpu)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    criterion = nn.CrossEntropyLoss().cuda(gpu)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    dataset = TensorDataset(torch.randn(2048, 3, 64, 64), torch.randint(0, 10, (2048,)))
    sampler = DistributedSampler(dataset)
    train_loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=2)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for i, (inputs, targets) in enumerate(train_loader):
            inputs, targets = inputs.cuda(gpu, non_blocking=True), targets.cuda(gpu, non_blocking=True)
            try:
                outputs = model(inputs)
                loss = criterion(outputs, targets)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            except RuntimeError as e:
                if "out of memory" in str(e):
                    print("| WARNING: ran out of memory, skipping this batch.")
                    if hasattr(torch.cuda, "empty_cache"):
                        torch.cuda.empty_cache()
                    optimizer.zero_grad()
                else:
                    raise e
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=90)
    args = parser.parse_args()
    args.world_size = torch.cuda.device_count()
    mp.spawn(worker, nprocs=args.world_size, args=(args,))
