# expect: missing-distributed-sampler
# source: https://github.com/meta-pytorch/torchft/pull/74
# reason: The DDP example built a DistributedSampler for its replica group but created the StatefulDataLoader with shuffle=True and without sampler=, so every replica group trained on the whole dataset; the merged fix passes the sampler to the loader.
import os
from datetime import timedelta

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as transforms
from torch import optim
from torchdata.stateful_dataloader import StatefulDataLoader
from torchft import DistributedDataParallel, DistributedSampler, Manager, ProcessGroupGloo, ProcessGroupNCCL


def main():
    replica_group = int(os.environ.get("REPLICA_GROUP_ID", 0))
    num_replica_groups = int(os.environ.get("NUM_REPLICA_GROUPS", 2))

    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    trainset = torchvision.datasets.CIFAR10(root="./cifar", train=True, download=True, transform=transform)
    sampler = DistributedSampler(
        trainset,
        replica_group=replica_group,
        num_replica_groups=num_replica_groups,
        rank=0,
        num_replicas=1,
        shuffle=True,
    )
    trainloader = StatefulDataLoader(trainset, batch_size=64, shuffle=True, num_workers=2)

    def load_state_dict(state_dict):
        net.load_state_dict(state_dict["model"])
        optimizer.load_state_dict(state_dict["optim"])

    def state_dict():
        return {"model": net.state_dict(), "optim": optimizer.state_dict()}

    device = "cuda" if torch.cuda.is_available() else "cpu"
    pg = ProcessGroupNCCL() if torch.cuda.is_available() else ProcessGroupGloo()
    manager = Manager(pg=pg, min_replica_size=1, load_state_dict=load_state_dict, state_dict=state_dict,
                      replica_id=f"train_ddp_{replica_group}", timeout=timedelta(seconds=10))

    net = nn.Sequential(nn.Conv2d(3, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(6 * 14 * 14, 10)).to(device)
    net = DistributedDataParallel(manager, net)
    optimizer = optim.AdamW(net.parameters())

    while manager.current_step() < 1000:
        for inputs, labels in trainloader:
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(net(inputs), labels)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
