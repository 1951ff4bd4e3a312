# expect: collective-mismatch
# source: https://github.com/ACEsuit/mace/pull/1216
# reason: In distributed fits only rank 0 evaluates the patience condition (it is inside the `if rank == 0:` metrics block) and `break`s out of the epoch loop when patience is exhausted; the other ranks keep training and wait at the next barrier / gradient all-reduce that rank 0 never reaches, so the run hangs; the merged fix broadcasts the stop decision from rank 0 to every rank (closes #1215).
import argparse
import logging
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class EnergyModel(nn.Module):
    def __init__(self, n_features=32, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_features, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def take_step(model, batch, optimizer, device, max_grad_norm=10.0):
    x, y = (t.to(device) for t in batch)
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_grad_norm)
    optimizer.step()
    return loss.detach()


@torch.no_grad()
def evaluate(model, loader, device):
    total, count = torch.zeros((), device=device), torch.zeros((), device=device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        total += nn.functional.mse_loss(model(x), y, reduction="sum")
        count += y.numel()
    # each rank reduces its shard of the validation set
    dist.all_reduce(total)
    dist.all_reduce(count)
    return (total / count).item()


def save_checkpoint(model, optimizer, epoch, path):
    torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, path)


def train(model, train_loader, valid_loader, train_sampler, optimizer, scheduler, device, rank, args):
    lowest_loss = np.inf
    patience_counter = 0
    epoch = 0
    while epoch < args.max_num_epochs:
        train_sampler.set_epoch(epoch)
        model.train()
        for batch in train_loader:
            take_step(model, batch, optimizer, device)
        dist.barrier()

        if epoch % args.eval_interval == 0:
            model.eval()
            valid_loss = evaluate(model, valid_loader, device)
            scheduler.step(valid_loss)
            if rank == 0:
                logging.info("Epoch %d: valid loss %.5f", epoch, valid_loss)
                if valid_loss >= lowest_loss:
                    patience_counter += 1
                    if patience_counter >= args.patience:
                        logging.info("Stopping optimization after %d epochs without improvement", patience_counter)
                        break
                else:
                    lowest_loss = valid_loss
                    patience_counter = 0
                    save_checkpoint(model, optimizer, epoch, os.path.join(args.checkpoints_dir, "best.pt"))
        dist.barrier()
        epoch += 1
    logging.info("Training complete")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max_num_epochs", type=int, default=500)
    parser.add_argument("--patience", type=int, default=30)
    parser.add_argument("--eval_interval", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--checkpoints_dir", default="checkpoints")
    args = parser.parse_args()

    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARNING)
    os.makedirs(args.checkpoints_dir, exist_ok=True)

    train_set = TensorDataset(torch.randn(4096, 32), torch.randn(4096))
    valid_set = TensorDataset(torch.randn(512, 32), torch.randn(512))
    train_sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    valid_sampler = DistributedSampler(valid_set, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler)
    valid_loader = DataLoader(valid_set, batch_size=args.batch_size, sampler=valid_sampler)

    model = DistributedDataParallel(EnergyModel().to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, amsgrad=True)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.8, patience=50)

    train(model, train_loader, valid_loader, train_sampler, optimizer, scheduler, device, rank, args)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
