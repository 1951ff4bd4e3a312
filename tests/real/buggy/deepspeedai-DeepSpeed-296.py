# expect: logging-from-all-ranks
# source: https://github.com/deepspeedai/DeepSpeed/pull/296
# reason: The engine created a TensorBoard SummaryWriter and wrote scalars on every rank, so all GPUs and nodes raced on the same log directory; the merged fix creates and writes it only when global rank is 0.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.tensorboard import SummaryWriter


class EngineConfig:
    def __init__(self, tensorboard=True, output_path="runs", job_name="job"):
        self.tensorboard = tensorboard
        self.output_path = output_path
        self.job_name = job_name


class TrainingEngine:
    def __init__(self, model, config):
        self.config = config
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.global_rank = dist.get_rank()
        self.module = DistributedDataParallel(model.cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.SGD(self.module.parameters(), lr=0.1)
        self.sample_count = 0
        if self.config.tensorboard:
            self.summary_writer = SummaryWriter(os.path.join(self.config.output_path, self.config.job_name))

    def step(self, x, y):
        loss = nn.functional.cross_entropy(self.module(x.cuda()), y.cuda())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.sample_count += x.shape[0]
        if self.config.tensorboard:
            self.summary_writer.add_scalar("Train/Samples/train_loss", loss.item(), self.sample_count)
        return loss


def main():
    engine = TrainingEngine(nn.Linear(784, 10), EngineConfig())
    for _ in range(500):
        engine.step(torch.randn(64, 784), torch.randint(0, 10, (64,)))


if __name__ == "__main__":
    main()
