# expect: missing-distributed-sampler
# source: https://github.com/Shark-NLP/DiffuSeq/issues/37
# reason: The training data came from load_data_text(), a helper that builds a plain DataLoader (no DistributedSampler) and drains it through an endless generator, while TrainLoop wraps the model in DDP; every GPU trained on the same batches, making distributed training pointless. The maintainers' later code builds the training loader with DistributedSampler(dataset).
import argparse
import os
import socket

import numpy as np
import torch as th
import torch.distributed as dist
from torch import nn
from torch.nn.parallel.distributed import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


def dev():
    if th.cuda.is_available():
        return th.device(f"cuda:{os.environ['LOCAL_RANK']}")
    return th.device("cpu")


def setup_dist():
    if dist.is_initialized():
        return
    backend = "gloo" if not th.cuda.is_available() else "nccl"
    hostname = "localhost" if backend == "gloo" else socket.gethostbyname(socket.getfqdn())
    os.environ.setdefault("MASTER_ADDR", hostname)
    dist.init_process_group(backend=backend, init_method="env://")
    if th.cuda.is_available():
        th.cuda.set_device(dev())
        th.cuda.empty_cache()


class TextDataset(Dataset):
    def __init__(self, rows, seq_len):
        self.rows = rows
        self.seq_len = seq_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        ids = np.array(self.rows[idx][: self.seq_len] + [0] * (self.seq_len - len(self.rows[idx])))
        return np.zeros((self.seq_len, 16), dtype=np.float32), {"input_ids": ids}


def infinite_loader(data_loader):
    while True:
        yield from data_loader


def load_data_text(batch_size, seq_len, deterministic=False, rows=None, loop=True):
    dataset = TextDataset(rows or [[1, 2, 3]] * 1000, seq_len)
    data_loader = DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=not deterministic,
        num_workers=4,
    )
    if loop:
        return infinite_loader(data_loader)
    return iter(data_loader)


class Denoiser(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(hidden, 64), nn.SiLU(), nn.Linear(64, hidden))

    def forward(self, x):
        return self.net(x)


class TrainLoop:
    def __init__(self, *, model, data, batch_size, lr, learning_steps):
        self.model = model
        self.data = data
        self.batch_size = batch_size
        self.learning_steps = learning_steps
        self.step = 0
        self.opt = th.optim.AdamW(self.model.parameters(), lr=lr)
        if th.cuda.is_available():
            self.use_ddp = True
            self.ddp_model = DDP(self.model, device_ids=[dev()], output_device=dev(), broadcast_buffers=False,
                                 bucket_cap_mb=128, find_unused_parameters=False)
        else:
            assert dist.get_world_size() == 1
            self.use_ddp = False
            self.ddp_model = self.model

    def run_loop(self):
        while self.step < self.learning_steps:
            batch, cond = next(self.data)
            self.run_step(batch, cond)
            self.step += 1

    def run_step(self, batch, cond):
        self.opt.zero_grad()
        batch = batch.to(dev())
        loss = (self.ddp_model(batch) - batch).pow(2).mean()
        loss.backward()
        self.opt.step()
        if self.step % 100 == 0 and dist.get_rank() == 0:
            print(f"step {self.step} loss {loss.item():.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--seq_len", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--learning_steps", type=int, default=40000)
    args = parser.parse_args()

    setup_dist()
    data = load_data_text(batch_size=args.batch_size, seq_len=args.seq_len)
    model = Denoiser().to(dev())
    TrainLoop(model=model, data=data, batch_size=args.batch_size, lr=args.lr,
              learning_steps=args.learning_steps).run_loop()


if __name__ == "__main__":
    main()
