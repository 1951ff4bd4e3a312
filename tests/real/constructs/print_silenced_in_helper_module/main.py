# expect:
# seen-in: https://github.com/facebookresearch/mae/blob/efb2a8062c206524e35e47d04501ed4f544c0ae8/main_finetune.py
# The entry point prints freely: util/misc.py's init_distributed_mode replaced builtins.print so that
# only the master prints (the set-up lives in a local module, not in this file).
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

import util.misc as misc


def main(args):
    misc.init_distributed_mode(args)
    device = torch.device("cuda", args.gpu)
    model = nn.Linear(768, 1000).to(device)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    data = TensorDataset(torch.randn(5000, 768), torch.randint(0, 1000, (5000,)))
    sampler = DistributedSampler(data, num_replicas=misc.get_world_size(), rank=misc.get_rank(), shuffle=True)
    loader = DataLoader(data, sampler=sampler, batch_size=64, drop_last=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    print(f"Start training for {args.epochs} epochs")
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for it, (x, y) in enumerate(loader):
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if it % 20 == 0:
                print(f"Epoch: [{epoch}] [{it}/{len(loader)}] loss: {loss.item():.4f}")
        misc.save_on_master({"model": model.module.state_dict(), "epoch": epoch}, "checkpoint.pth")
        print(f"Max accuracy so far at epoch {epoch}")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=50)
    main(p.parse_args())
