# expect: shuffle-with-sampler
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms


def run(args_epochs=5):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = datasets.MNIST("data", train=True, download=False, transform=transforms.ToTensor())
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=128, sampler=train_sampler, shuffle=True)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 10)).to(local_rank)
    model = DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(args_epochs):
        train_sampler.set_epoch(epoch)
        for images, labels in train_loader:
            out = model(images.to(local_rank))
            loss = torch.nn.functional.cross_entropy(out, labels.to(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    run()
