# expect: none
import os

import torch
import torch.distributed as dist


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    grads = [torch.ones(1024, device="cuda") for _ in range(4)]
    handles = []
    for g in grads:
        work = dist.all_reduce(g, async_op=True)
        handles.append(work)
    for work in handles:
        work.wait()
    total = torch.stack(grads).sum()
    req = dist.broadcast(total, src=0, async_op=True)
    req.wait()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
