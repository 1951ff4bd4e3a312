# expect: missing-set-device
# source: https://github.com/NVIDIA-NeMo/Speech/pull/2312
# reason: The DDP translate script moved each spawned worker's model with model.to(rank) but never selected the worker's GPU, so the model instances piled up on the first GPU; the merged fix calls torch.cuda.set_device(rank) instead.
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class TranslationModel(nn.Module):
    def __init__(self, vocab=32000, dim=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 8, batch_first=True), 6)
        self.proj = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.proj(self.encoder(self.embed(tokens)))


def translate(rank, world_size, args):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(args.port)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    model = TranslationModel()
    model.load_state_dict(torch.load(args.model, map_location="cpu"))
    model = model.to(rank).eval()
    dataset = TensorDataset(torch.randint(0, 32000, (args.num_lines, 64)))
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=DistributedSampler(dataset, shuffle=False))
    outputs = []
    with torch.no_grad():
        for (tokens,) in loader:
            outputs.append(model(tokens.to(rank)).argmax(-1).cpu())
    gathered = [None] * world_size
    dist.all_gather_object(gathered, outputs)
    if rank == 0:
        torch.save(gathered, args.output)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--output", default="translations.pt")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--num-lines", type=int, default=3000)
    parser.add_argument("--port", type=int, default=12355)
    args = parser.parse_args()
    world_size = torch.cuda.device_count()
    mp.spawn(translate, args=(world_size, args), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()
