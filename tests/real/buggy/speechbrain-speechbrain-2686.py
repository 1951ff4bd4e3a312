# expect: missing-set-device
# source: https://github.com/speechbrain/speechbrain/pull/2686
# reason: The DDP init helper created the NCCL group without torch.cuda.set_device, so every process stayed on cuda:0 and the main-process-first barriers stopped holding the other ranks; the merged fix sets the device inside the init helper.
import argparse
import datetime
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def parse_run_opts(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--distributed_backend", default="nccl")
    parser.add_argument("--data_folder", default="data")
    parser.add_argument("--number_of_epochs", type=int, default=20)
    opts = vars(parser.parse_args(argv))
    opts["local_rank"] = int(os.environ.get("LOCAL_RANK", 0))
    opts["device"] = f"cuda:{opts['local_rank']}"
    return opts


def ddp_init_group(run_opts):
    if "RANK" not in os.environ:
        return
    dist.init_process_group(backend=run_opts["distributed_backend"], rank=int(os.environ["RANK"]),
                            timeout=datetime.timedelta(seconds=7200))


def if_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def ddp_barrier():
    if dist.is_initialized():
        dist.barrier()


def run_on_main(func, *args):
    if if_main_process():
        func(*args)
    ddp_barrier()


def prepare_manifest(folder):
    os.makedirs(folder, exist_ok=True)
    time.sleep(10)  # stands for the long csv / manifest preparation
    data = TensorDataset(torch.randn(3000, 80, 100), torch.randint(0, 40, (3000,)))
    torch.save(data, os.path.join(folder, "train.pt"))


def main():
    run_opts = parse_run_opts()
    ddp_init_group(run_opts)
    run_on_main(prepare_manifest, run_opts["data_folder"])
    train_set = torch.load(os.path.join(run_opts["data_folder"], "train.pt"))
    device = torch.device(run_opts["device"])
    model = nn.Sequential(nn.Conv1d(80, 256, 5, padding=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(),
                          nn.Linear(256, 40)).to(device)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[run_opts["local_rank"]])
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=16, sampler=sampler)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(run_opts["number_of_epochs"]):
        sampler.set_epoch(epoch)
        for feats, labels in loader:
            loss = nn.functional.cross_entropy(model(feats.to(device)), labels.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if if_main_process():
            print(f"epoch {epoch}: loss {loss.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
