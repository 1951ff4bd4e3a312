# expect: batchnorm-not-synced
# source: https://github.com/Jingkang50/OpenOOD/issues/186
# reason: The benchmark's network builder wraps the ResNet backbones in DistributedDataParallel for multi-GPU training but keeps their plain BatchNorm layers, so each GPU normalised with statistics from its own slice of the batch and the running statistics drifted apart between replicas; the maintainers agreed and added SyncBatchNorm conversion for DDP models (#223).
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNet18_32x32(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.layers = nn.Sequential(BasicBlock(64, 64), BasicBlock(64, 128, 2), BasicBlock(128, 256, 2),
                                    BasicBlock(256, 512, 2))
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        feat = self.layers(torch.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(feat, 1), 1))


def get_local_rank():
    return int(os.environ.get("LOCAL_RANK", 0))


def get_network(config):
    net = ResNet18_32x32(num_classes=config["num_classes"])
    if config["num_gpus"] > 1:
        net.cuda()
        net = torch.nn.parallel.DistributedDataParallel(net, device_ids=[get_local_rank()], broadcast_buffers=True)
    elif config["num_gpus"] > 0:
        net.cuda()
    return net


def get_dataloader(config):
    dataset = TensorDataset(torch.randn(5000, 3, 32, 32), torch.randint(0, config["num_classes"], (5000,)))
    sampler = DistributedSampler(dataset) if config["num_gpus"] > 1 else None
    loader = DataLoader(dataset, batch_size=config["batch_size"], shuffle=sampler is None, sampler=sampler,
                        num_workers=config["num_workers"])
    return loader, sampler


class BaseTrainer:
    def __init__(self, net, loader, config):
        self.net, self.loader, self.config = net, loader, config
        self.optimizer = torch.optim.SGD(net.parameters(), lr=config["lr"], momentum=0.9, weight_decay=5e-4,
                                         nesterov=True)

    def train_epoch(self):
        self.net.train()
        for data, target in self.loader:
            logits = self.net(data.cuda())
            loss = nn.functional.cross_entropy(logits, target.cuda())
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


def main_worker(local_rank, config):
    os.environ["LOCAL_RANK"] = str(local_rank)
    dist.init_process_group("nccl", init_method=config["dist_url"], world_size=config["num_gpus"], rank=local_rank)
    torch.cuda.set_device(local_rank)
    net = get_network(config)
    loader, sampler = get_dataloader(config)
    trainer = BaseTrainer(net, loader, config)
    for epoch in range(config["num_epochs"]):
        if sampler is not None:
            sampler.set_epoch(epoch)
        trainer.train_epoch()
        if local_rank == 0:
            os.makedirs(config["output_dir"], exist_ok=True)
            torch.save(net.module.state_dict(), os.path.join(config["output_dir"], "last_epoch.ckpt"))
    dist.destroy_process_group()


def launch(main_func, num_gpus, config):
    if num_gpus > 1:
        mp.spawn(main_func, nprocs=num_gpus, args=(config,))
    else:
        main_func(0, config)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-gpus", type=int, default=4)
    args = parser.parse_args()
    config = {"num_gpus": args.num_gpus, "num_classes": 10, "batch_size": 128, "num_workers": 4, "lr": 0.1,
              "num_epochs": 100, "output_dir": "results/cifar10_resnet18", "dist_url": "tcp://127.0.0.1:29500"}
    launch(main_worker, config["num_gpus"], config)
