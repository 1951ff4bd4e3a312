# expect:
# seen-in: https://github.com/hkchengrex/XMem/blob/f3b841d50df058910bbf690229ddc15fb1aef7d6/train.py
# Only rank 0 builds its trainer with an event writer and a save path; the other ranks build it without them (the
# None defaults), and the trainer saves only when it holds them: the checkpoints are written by rank 0 alone.
import os

import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter

from engine import Engine


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    if rank == 0:
        run_dir = os.path.join("runs", os.environ.get("RUN_NAME", "default"))
        events = SummaryWriter(run_dir)
        engine = Engine(events=events, ckpt_prefix=os.path.join(run_dir, "net"), local_rank=int(os.environ["LOCAL_RANK"]))
    else:
        engine = Engine(local_rank=int(os.environ["LOCAL_RANK"]))
    engine.fit(steps=1000)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
