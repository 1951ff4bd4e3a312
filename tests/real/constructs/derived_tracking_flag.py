# expect:
# seen-in: https://github.com/karpathy/nanochat/blob/92d63d4e8bb4df75c3b71618f31ddde2378b2bcd/scripts/base_train.py
# The experiment tracker is started behind a flag that mixes a user option with the rank test ("no tracking, or
# not the main process"): the flag is false only on the main process, so the real run starts there alone and the
# other ranks log into a do-nothing stand-in.
import os

import torch
import torch.distributed as dist
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP


class NullRun:
    def log(self, *args, **kwargs):
        pass

    def finish(self):
        pass


def main(run_name="baseline"):
    dist.init_process_group("nccl")
    rank, local_rank = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    is_master = rank == 0
    no_tracking = run_name == "none" or not is_master
    run = NullRun() if no_tracking else wandb.init(project="demo", name=run_name)
    model = DDP(torch.nn.Linear(32, 32).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(200):
        loss = model(torch.randn(16, 32, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        run.log({"loss": loss.item(), "step": step})
    run.finish()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
