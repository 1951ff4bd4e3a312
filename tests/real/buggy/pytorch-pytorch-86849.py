# expect: missing-set-device
# source: https://github.com/pytorch/pytorch/issues/86849
# reason: Two forkserver workers each put their tensor on cuda:{worker} and ran an NCCL all_reduce without torch.cuda.set_device, so worker 1 also created a CUDA context on GPU 0 and the collective allocated excess memory there; a maintainer reproduced it and the labelled workaround is the one-line set_device of the worker's GPU.
import socket
from contextlib import closing

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def find_free_port(address="127.0.0.1"):
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind((address, 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        return s.getsockname()[1]


def init_and_run_all_reduce(worker_ind, port, world_size=2):
    store = dist.TCPStore(host_name="127.0.0.1", port=port, world_size=world_size, is_master=worker_ind == 0)
    dist.init_process_group(backend="nccl", store=store, rank=worker_ind, world_size=world_size)
    tensor = torch.ones(256, 1024, 1024, device=f"cuda:{worker_ind}")
    for _ in range(10):
        dist.all_reduce(tensor)
    print(f"worker {worker_ind}: {torch.cuda.memory_reserved(worker_ind) / 2**20:.0f} MiB reserved")
    dist.destroy_process_group()


if __name__ == "__main__":
    ctx = mp.get_context("forkserver")
    port = find_free_port()
    workers = [ctx.Process(target=init_and_run_all_reduce, args=(i, port)) for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
