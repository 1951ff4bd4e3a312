# expect: collective-mismatch
# source: https://github.com/sgl-project/sglang/pull/26923
# reason: writing_check returned early on a rank whose pending-write count was zero (it differs per rank) and skipped the all_reduce its peers entered, so the ranks deadlocked; the merged fix always enters the all_reduce.
import os

import torch
import torch.distributed as dist


class HostCacheController:
    """Write-through of device cache blocks to host memory, kept in step across the tensor-parallel ranks."""

    def __init__(self, group):
        self.group = group
        self.ongoing_write_through = {}

    def submit(self, block_id, ok):
        if ok:
            self.ongoing_write_through[block_id] = torch.zeros(1)

    def writing_check(self):
        if len(self.ongoing_write_through) == 0:
            return 0
        finished = torch.tensor([len(self.ongoing_write_through)], dtype=torch.int64, device="cuda")
        dist.all_reduce(finished, op=dist.ReduceOp.MIN, group=self.group)
        count = int(finished.item())
        for block_id in list(self.ongoing_write_through)[:count]:
            del self.ongoing_write_through[block_id]
        return count


def serve(steps):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    controller = HostCacheController(dist.group.WORLD)
    for step in range(steps):
        allocated = torch.rand(1).item() > 0.3  # host-pool allocation succeeds or not, per rank
        controller.submit(step, allocated)
        controller.writing_check()
    dist.destroy_process_group()


if __name__ == "__main__":
    serve(1000)
