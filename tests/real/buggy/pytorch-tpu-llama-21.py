# expect: missing-set-device
# source: https://github.com/pytorch-tpu/llama/pull/21
# reason: Each spawned rank joins an NCCL group and then makes CUDA the default tensor type without torch.cuda.set_device(rank), so every rank builds its model shard on cuda:0; the fix adds set_device(rank) right after init_process_group.
import json
import os
import sys
from pathlib import Path
from typing import Tuple

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


class Transformer(nn.Module):
    def __init__(self, dim, n_layers, vocab_size):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(n_layers))
        self.out = nn.Linear(dim, vocab_size)

    @torch.no_grad()
    def forward(self, tokens):
        h = self.embed(tokens)
        for layer in self.layers:
            h = torch.relu(layer(h))
        return self.out(h)


def setup_model_parallel(rank, world_size) -> Tuple[int, int]:
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.manual_seed(1)
    return rank, world_size


def load(ckpt_dir, rank, world_size, max_seq_len):
    checkpoints = sorted(Path(ckpt_dir).glob("*.pth"))
    assert world_size == len(checkpoints), f"{len(checkpoints)} shards for a world of {world_size}"
    checkpoint = torch.load(checkpoints[rank], map_location="cpu")
    params = json.loads((Path(ckpt_dir) / "params.json").read_text())
    torch.set_default_tensor_type(torch.cuda.HalfTensor)
    model = Transformer(params["dim"], params["n_layers"], params["vocab_size"])
    torch.set_default_tensor_type(torch.FloatTensor)
    model.load_state_dict(checkpoint, strict=False)
    return model


def main(rank, world_size, ckpt_dir, max_seq_len=256):
    rank, world_size = setup_model_parallel(rank, world_size)
    if rank > 0:
        sys.stdout = open(os.devnull, "w")
    model = load(ckpt_dir, rank, world_size, max_seq_len)
    tokens = torch.randint(0, 32000, (1, 16), device="cuda")
    print(model(tokens).argmax(-1))
    dist.destroy_process_group()


if __name__ == "__main__":
    world = torch.cuda.device_count()
    mp.spawn(main, args=(world, sys.argv[1]), nprocs=world)
