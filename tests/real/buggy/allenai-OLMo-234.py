# expect: no-barrier-before-checkpoint-load
# source: https://github.com/allenai/OLMo/pull/234
# reason: The initial checkpoint was sometimes read before it had been fully written, giving FileNotFoundError; the PR adds a barrier before loading it.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def save_unsharded_checkpoint(model, path):
    if dist.get_rank() == 0:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        torch.save(model.state_dict(), path)


def main(save_folder="runs/olmo", steps=1000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = nn.Sequential(nn.Embedding(50280, 512), nn.Linear(512, 50280)).to(device)
    ckpt = os.path.join(save_folder, "step0-unsharded", "model.pt")
    save_unsharded_checkpoint(model, ckpt)
    model.load_state_dict(torch.load(ckpt, map_location=device))
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4)
    for step in range(steps):
        ids = torch.randint(0, 50280, (8, 256), device=device)
        loss = nn.functional.cross_entropy(model(ids[:, :-1]).flatten(0, 1), ids[:, 1:].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
