# expect:
# seen-in: https://github.com/karpathy/build-nanogpt/blob/6104ab1b53920f6e2159749676073ff7d815c1fa/train_gpt2.py
# Every rank deliberately prints its own generated samples, tagged with its rank; the training log
# itself is printed by the master process only.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main(max_steps=5000, sample_every=250):
    ddp_rank = int(os.environ["RANK"])
    ddp_local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="nccl")
    device = f"cuda:{ddp_local_rank}"
    torch.cuda.set_device(device)
    master_process = ddp_rank == 0
    model = DDP(nn.Sequential(nn.Embedding(50304, 256), nn.Linear(256, 50304)).to(device), device_ids=[ddp_local_rank])
    raw_model = model.module
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    for step in range(max_steps):
        x = torch.randint(0, 50304, (8, 257), device=device)
        loss = nn.functional.cross_entropy(model(x[:, :-1]).flatten(0, 1), x[:, 1:].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if master_process:
            print(f"step {step:5d} | loss: {loss.item():.6f}")
        if step % sample_every == 0:
            with torch.no_grad():
                xgen = raw_model(torch.zeros(4, 1, dtype=torch.long, device=device)).argmax(-1)
            for i in range(xgen.size(0)):
                print(f"rank {ddp_rank} sample {i}: {xgen[i].tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
