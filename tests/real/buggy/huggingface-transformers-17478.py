# expect: collective-mismatch
# source: https://github.com/huggingface/transformers/issues/17478
# reason: The reporter found metrics were computed per process without gathering, so early stopping fired on one rank, which entered the final barrier while the others kept training; gathering the outputs fixed the hang.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def evaluate_local(model, loader, device):
    model.eval()
    losses = []
    with torch.no_grad():
        for x, y in loader:
            losses.append(nn.functional.cross_entropy(model(x.to(device)), y.to(device)).item())
    model.train()
    return sum(losses) / len(losses)


def main(max_epochs=50, patience=3):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    train = TensorDataset(torch.randn(20000, 64), torch.randint(0, 8, (20000,)))
    val = TensorDataset(torch.randn(2000, 64), torch.randint(0, 8, (2000,)))
    train_sampler = DistributedSampler(train)
    train_loader = DataLoader(train, batch_size=64, sampler=train_sampler)
    val_loader = DataLoader(val, batch_size=64, sampler=DistributedSampler(val, shuffle=False))
    model = DDP(nn.Linear(64, 8).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), 1e-3)
    best, bad_epochs = float("inf"), 0
    for epoch in range(max_epochs):
        train_sampler.set_epoch(epoch)
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss = evaluate_local(model, val_loader, device)  # this rank's shard only
        if val_loss < best:
            best, bad_epochs = val_loss, 0
        else:
            bad_epochs += 1
        if bad_epochs >= patience:
            break
    dist.barrier()
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "final.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
