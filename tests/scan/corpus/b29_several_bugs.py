# expect: missing-distributed-sampler, hardcoded-cuda0, logging-from-all-ranks, destroy-process-group-missing
import logging

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger(__name__)


def main(local_rank: int):
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(256, 10), torch.randn(256, 1))
    train_loader = DataLoader(data, batch_size=8)
    net = DistributedDataParallel(nn.Linear(10, 1).cuda(), device_ids=[0])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(5):
        for x, y in train_loader:
            loss = nn.functional.mse_loss(net(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
            logger.info("epoch %d loss %.4f", epoch, loss.item())
