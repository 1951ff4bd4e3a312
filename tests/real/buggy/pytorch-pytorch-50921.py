# expect: missing-set-device
# source: https://github.com/pytorch/pytorch/issues/50921
# reason: Spawned workers joined an NCCL process group and all-reduced torch.zeros([1]).cuda() without selecting their GPU, so both processes used GPU 0 and the all-reduce completed only on rank 0 (it worked with gloo); a maintainer noted the issue was mitigated by setting the CUDA device with torch.cuda.set_device().
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def init_distributed_world(rank, world_size):
    backend = dist.Backend.NCCL if torch.cuda.is_available() else dist.Backend.GLOO
    assert world_size <= torch.cuda.device_count()
    port = 20000
    init_method = "tcp://localhost:{port}".format(port=port)
    dist.init_process_group(init_method=init_method, backend=backend, rank=rank, world_size=world_size)
    dist.all_reduce(torch.zeros([1]).cuda(), op=dist.ReduceOp.SUM)
    print("reduced", dist.get_rank())


def local_worker(rank, workers):
    init_distributed_world(rank, workers)


if __name__ == "__main__":
    workers = 2
    mp.spawn(local_worker, nprocs=workers, args=(workers,), join=True)
