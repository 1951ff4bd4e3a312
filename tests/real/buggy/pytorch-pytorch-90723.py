# expect: missing-set-device
# source: https://github.com/pytorch/pytorch/issues/90723
# reason: A DDP script compiled with torch.compile failed on rank 1 with tensors on the wrong CUDA device: each spawned process moved its model to cuda:rank but never set the current device, so code generated at run time used the default device 0 on every rank; the maintainers answered that DDP requires setting the default CUDA device per rank (torch.cuda.set_device(rank)), which fixed it.
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from tqdm import tqdm


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


def get_matrix(r):
    x, y, z = r.unbind(-1)
    rot = torch.stack([-z, y, z, -x, -y, x], dim=-1)
    return rot.reshape(*x.shape, 3, 2)


class Model(nn.Module):
    def __init__(self, num_views=150000):
        super().__init__()
        self.pose_update_r = nn.Parameter(torch.zeros(num_views, 3))
        nn.init.normal_(self.pose_update_r, std=1e-3)

    def forward(self, idx, points):
        rot = get_matrix(self.pose_update_r[idx])
        return torch.einsum("bij,bj->bi", rot, points)


def demo_basic(rank, world_size):
    setup(rank, world_size)
    model = Model().to(rank)
    ddp_model = DDP(model, device_ids=[rank])
    ddp_model = torch.compile(ddp_model)
    optimizer = torch.optim.Adam(ddp_model.parameters(), lr=1e-3)

    for _ in tqdm(range(100), disable=rank != 0):
        idx = torch.randint(0, 150000, (1024,), device=rank)
        points = torch.randn(1024, 2, device=rank)
        target = torch.randn(1024, 3, device=rank)
        optimizer.zero_grad()
        loss = F.mse_loss(ddp_model(idx, points), target)
        loss.backward()
        optimizer.step()
    cleanup()


if __name__ == "__main__":
    n_gpus = torch.cuda.device_count()
    mp.spawn(demo_basic, args=(n_gpus,), nprocs=n_gpus, join=True)
