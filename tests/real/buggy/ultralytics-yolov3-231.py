# expect: shuffle-with-sampler
# source: https://github.com/ultralytics/yolov3/issues/231
# reason: Labelled a bug by the maintainers: with several GPUs a DistributedSampler is passed together with shuffle=True, which DataLoader rejects.
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def train(opt):
    dataset = TensorDataset(torch.randn(1000, 3, 416, 416), torch.randn(1000, 255, 13, 13))
    model = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.LeakyReLU(0.1), nn.Conv2d(32, 255, 1), nn.AdaptiveAvgPool2d(13))

    # Initialize distributed training
    if opt.distributed:
        dist.init_process_group(backend=opt.backend, init_method=opt.dist_url)
        torch.cuda.set_device(opt.local_rank)
        model = model.cuda(opt.local_rank)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[opt.local_rank])
        sampler = torch.utils.data.distributed.DistributedSampler(dataset)
    else:
        model = model.cuda()
        sampler = None

    # Dataloader
    dataloader = DataLoader(dataset, batch_size=opt.batch_size, num_workers=opt.num_workers, shuffle=True,
                            pin_memory=True, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    for epoch in range(opt.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for imgs, targets in dataloader:
            loss = nn.functional.mse_loss(model(imgs.cuda()), targets.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if opt.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--num-workers", type=int, default=4)
    parser.add_argument("--backend", default="nccl")
    parser.add_argument("--dist-url", default="env://")
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--distributed", action="store_true")
    train(parser.parse_args())
