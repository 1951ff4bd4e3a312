# expect:
# seen-in: https://github.com/keyu-tian/SparK/blob/a63e386f8e5186bc07ad7fce86e06b08f48a61ea/pretrain/main.py
# Without a launcher (no RANK in the environment) the helper takes the one visible GPU and returns before any group
# is joined; with a launcher it binds the process to its local GPU first, then joins the group.
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

_state = {"device": "cpu", "local": 0, "distributed": False}


def setup_devices():
    if not torch.cuda.is_available():
        print("no GPU, running on the CPU", file=sys.stderr)
        return
    if "RANK" not in os.environ:
        _state["device"] = torch.empty(1).cuda().device
        print("RANK is not set: one process", file=sys.stderr)
        return
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    _state.update(device=torch.empty(1).cuda().device, local=local, distributed=True)


def main():
    setup_devices()
    device = _state["device"]
    net = nn.Linear(16, 2).to(device)
    if _state["distributed"]:
        net = DDP(net, device_ids=[_state["local"]])
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    for step in range(50):
        loss = net(torch.randn(8, 16, device=device)).logsumexp(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
