# expect:
# seen-in: https://github.com/facebookresearch/mmf/blob/b0ffc7fba39f210f833c127362146aec01a2f259/mmf_cli/run.py
# NCCL variables forwarded from the user's configuration only when set (the user's tuning, not the script's), and
# a checkpoint writer that returns early unless on the main process (`if not is_main() and not is_xla(): return`).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def is_main():
    return dist.get_rank() == 0


def is_xla():
    return os.environ.get("USE_XLA") == "1"


def distributed_init(config):
    nccl = config.get("nccl", {})
    if nccl.get("socket_nthreads"):
        os.environ["NCCL_SOCKET_NTHREADS"] = str(nccl["socket_nthreads"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))


class Checkpoint:
    def __init__(self, model):
        self.model = model

    def save(self, step):
        if not is_main() and not is_xla():
            return
        torch.save(self.model.module.state_dict(), f"model_{step}.ckpt")


def main(config):
    distributed_init(config)
    local_rank = int(os.environ["LOCAL_RANK"])
    data = TensorDataset(torch.randn(1024, 8), torch.randn(1024, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    model = DistributedDataParallel(nn.Linear(8, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    checkpoint = Checkpoint(model)
    for epoch in range(config["epochs"]):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        checkpoint.save(epoch)
    dist.destroy_process_group()


if __name__ == "__main__":
    main({"epochs": 3, "nccl": {"socket_nthreads": os.environ.get("SOCKET_NTHREADS")}})
