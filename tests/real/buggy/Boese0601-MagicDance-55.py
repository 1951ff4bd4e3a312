# expect: missing-distributed-sampler
# source: https://github.com/Boese0601/MagicDance/issues/55
# reason: With torchrun on 8 GPUs every GPU read the same data each iteration; the thread confirms the loader needs per-rank sharding (a sampler or manual sharding).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def main(args):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    train_dataset = TensorDataset(torch.randn(3000, 3, 64, 64), torch.randn(3000, 3, 64, 64))
    train_dataloader = DataLoader(train_dataset, batch_size=args["train_batch_size"], shuffle=True,
                                  num_workers=args["num_workers"], pin_memory=True)
    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.SiLU(), nn.Conv2d(64, 3, 3, padding=1)).to(device)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args["lr"])
    step = 0
    for epoch in range(args["num_train_epochs"]):
        for ref, target in train_dataloader:
            loss = nn.functional.mse_loss(model(ref.to(device)), target.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if rank == 0 and step % 100 == 0:
                print(f"step {step}: {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main({"train_batch_size": 4, "num_workers": 4, "lr": 1e-5, "num_train_epochs": 100})
