# expect:
# seen-in: https://github.com/THUDM/ChatGLM-6B/blob/401bf3a8a7dd8a26fba189551dccfc61a7079b4e/ptuning/main.py
# The launcher convention of the HF examples and Trainer (whose copy ChatGLM-6B keeps): --local_rank defaults to -1
# when no launcher started the process, so the `local_rank == -1` arm runs in a single-process run only. The RNG
# state is saved to one file there and to one file per rank otherwise.
import argparse
import os
import random

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def save_rng_state(output_dir, local_rank):
    states = {"python": random.getstate(), "cpu": torch.random.get_rng_state()}
    if local_rank == -1:
        torch.save(states, os.path.join(output_dir, "rng_state.pth"))
    else:
        torch.save(states, os.path.join(output_dir, f"rng_state_{local_rank}.pth"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--output_dir", default="out")
    args = parser.parse_args()
    if args.local_rank != -1:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
    device = torch.device("cuda", max(args.local_rank, 0))
    model = torch.nn.Linear(16, 2).to(device)
    if args.local_rank != -1:
        model = DDP(model, device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(100):
        loss = model(torch.randn(8, 16, device=device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 50 == 49:
            save_rng_state(args.output_dir, args.local_rank)


if __name__ == "__main__":
    main()
