# expect: unused-parameters-error
# source: https://github.com/facebookresearch/ClassyVision/pull/398
# reason: Fine-tuning froze the trunk (requires_grad = False) after the model had already been wrapped in DistributedDataParallel; DDP still expected gradients for the frozen parameters and failed with 'Expected to have finished reduction in the prior iteration'; the fix re-creates the DDP wrapper after freezing.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class ClassifierModel(nn.Module):
    def __init__(self, num_classes=100):
        super().__init__()
        self.trunk = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                   nn.Flatten())
        self.heads = nn.Linear(64, num_classes)

    def forward(self, x):
        return self.heads(self.trunk(x))


class FineTuningTask:
    def __init__(self, freeze_trunk=True):
        self.freeze_trunk = freeze_trunk
        self.base_model = ClassifierModel()
        self.distributed_model = None
        self.optimizer = None

    def init_distributed_data_parallel_model(self):
        local_rank = int(os.environ["LOCAL_RANK"])
        self.base_model = self.base_model.cuda(local_rank)
        self.distributed_model = DistributedDataParallel(self.base_model, device_ids=[local_rank])

    def _freeze_trunk(self):
        for param in self.base_model.trunk.parameters():
            param.requires_grad = False

    def prepare(self):
        self.init_distributed_data_parallel_model()
        if self.freeze_trunk:
            self._freeze_trunk()
        params = [p for p in self.base_model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9)

    def train(self, loader, sampler, epochs):
        criterion = nn.CrossEntropyLoss()
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for images, labels in loader:
                out = self.distributed_model(images.cuda())
                loss = criterion(out, labels.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dataset = TensorDataset(torch.randn(1000, 3, 64, 64), torch.randint(0, 100, (1000,)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    task = FineTuningTask()
    task.prepare()
    task.train(loader, sampler, epochs=10)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
