# expect: none
import os

import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = torchvision.models.resnet18(num_classes=10)
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank])
    model(torch.randn(2, 3, 64, 64).cuda()).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
